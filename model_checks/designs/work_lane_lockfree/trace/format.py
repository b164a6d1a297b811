"""The work-lane-lockfree trace format (version 2) as `lanecheck validate` reaches it: ``FORMAT``.

Well-formedness, seq continuity and verdicts are ``conformance.streamed``'s; the judge is
``checker.LockFreeChecker``, the streaming search over ``spec/work_lane_lockfree.py``.
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.fast_format import OTHER_VERSION
from model_checks.conformance.streamed import is_bool, is_count, is_item, is_items, one_of
from model_checks.designs.work_lane_lockfree.trace.checker import LockFreeChecker
from model_checks.designs.work_lane_lockfree.trace.header import HEADER
from model_checks.designs.work_lane_lockfree.trace.rules import RULES

DESIGN = "work-lane-lockfree"
VERSION = 2
CONFIG_KEYS = HEADER.keys

is_word = one_of("idle", "scheduled", "draining")
is_mode = one_of("drain", "discard")


def is_item_or_null(v: Any) -> bool:
    return v is None or is_item(v)


def is_lane_or_null(v: Any) -> bool:
    return v is None or is_count(v)


def is_false(v: Any) -> bool:
    return v is False


def _make(config: dict[str, Any]) -> LockFreeChecker:
    return LockFreeChecker(config)


_LANE = ("lane", is_count)

_V1 = "a version-1 (work-lane) event, not one of trace format version 2 (work-lane-lockfree)"


def version_1_event(obj: dict[str, Any]) -> str | None:
    """Words for a refused line that is a version-1 work-lane event: its post ok/capacity_exceeded
    (with ``submit``) and its drain_end are two or three atomic steps in version 2."""
    kind = obj.get("event")
    if kind == "drain_end":
        return (
            f"drain_end is {_V1}: the end of a drain is logged as cas (from draining to idle), then "
            "recheck, then, when the re-check saw items, cas (idle to scheduled) and its submit"
        )
    result = obj.get("result")
    v1_post = (
        result in ("ok", "capacity_exceeded") or obj.get("submit") is True or (result is None and "ok" in obj)
    )
    if kind == "post" and v1_post:
        return (
            f"this post is {_V1}: an accepted or full post is logged as push (result ok or "
            "capacity_exceeded), then, after an ok push, cas (idle to scheduled) and the submit it "
            "owes; a version-2 post logs only a refusal (result invalid_state or invalid_argument)"
        )
    return None


OTHER_VERSION[DESIGN] = version_1_event

FORMAT = HEADER.format(
    DESIGN,
    __package__,
    {
        # A post's lane may be null (an invalid handle), so it is not a bounded `lane` field here:
        # the checker bounds it and requires it (LockFreeChecker._check_post).
        "post": (("item", is_item), ("result", one_of("invalid_argument", "invalid_state"))),
        "push": (_LANE, ("item", is_item), ("result", one_of("ok", "capacity_exceeded"))),
        "cas": (_LANE, ("from", is_word), ("to", is_word), ("ok", is_bool)),
        "submit": (_LANE,),
        "take": (_LANE,),
        "drain_begin": (_LANE,),
        "pop": (_LANE, ("item", is_item_or_null)),
        "invoke": (_LANE, ("item", is_item)),
        "recheck": (_LANE, ("empty", is_bool)),
        "submit_refused": (_LANE,),
        "stop_begin": (("mode", is_mode),),
        "stop_rejected": (("mode", is_mode), ("reason", one_of("in_callback", "stop_in_progress"))),
        "reset": (_LANE, ("items", is_items)),
        "discard": (_LANE, ("items", is_items)),
        "stop_end": (("mode", is_mode), ("result", one_of("ok", "failed"))),
    },
    make=_make,
    rules=RULES,
    completion="stop_end",
    optional={
        "post": (("lane", is_lane_or_null), ("submit", is_false)),
        "cas": (("saw", is_word), ("invoked", is_count)),
    },
)

__all__ = ["CONFIG_KEYS", "DESIGN", "FORMAT", "VERSION"]
