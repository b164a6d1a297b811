"""Schedule-gate trace events for tests: the shortest complete behaviour of one post."""

from __future__ import annotations

from typing import Any


def one_post(actor: int) -> list[dict[str, Any]]:
    """p0 posts "a" to ``actor``, w0 runs it, main stops: every step of one post, in order."""
    return [
        {"thread": "p0", "event": "permit_acquire", "actor": actor, "item": "a", "granted": True},
        {"thread": "p0", "event": "admit_begin", "actor": actor, "item": "a", "permit": True},
        {"thread": "p0", "event": "publish", "actor": actor, "item": "a", "result": "ok"},
        {
            "thread": "p0",
            "event": "admit_end",
            "actor": actor,
            "item": "a",
            "directive": "enqueue_ready_token",
            "deferred": False,
        },
        {"thread": "p0", "event": "token_enqueue", "actor": actor},
        {"thread": "w0", "event": "take", "actor": actor},
        {"thread": "w0", "event": "drain_begin", "actor": actor},
        {"thread": "w0", "event": "process", "actor": actor, "item": "a"},
        {"thread": "w0", "event": "drain_end", "actor": actor, "directive": "release_permit", "processed": 1},
        {"thread": "w0", "event": "permit_release", "actor": actor, "reason": "idle"},
        {"thread": "main", "event": "stop_end"},
    ]
