"""The Akka/Pekko mailbox design: one atomic status word per mailbox, scheduled on a dispatcher."""

from __future__ import annotations

from typing import Any

from model_checks.design import built_in


def _mailbox(c: Any, s: Any) -> Any:
    from spec.akka_mailbox import ShowWord  # with the spec, when a diagram is drawn

    return ShowWord(s.status[0])


DESIGN = built_in(
    __name__,
    "akka-mailbox",
    summary="Akka/Pekko's Mailbox: a CAS status word, throughput-bounded runs, suspend and close",
    verify_rows=(("akka-mailbox", ".trace:rows"),),
    reference_modules=("reference.akka_mailbox", "reference.akka_actor"),
    benches={
        "akka-mailbox": (
            ".bench",
            "the Akka-mailbox reference on the shared workload of `bench designs`, against a direct loop",
        ),
        "akka-vs-pykka": (
            ".actors_bench",
            "the Akka-mailbox reference against pykka on ping-pong and fan-in: messages/s, same run "
            "(goal 5x)",
        ),
    },
    projections={
        "mailbox": _mailbox,
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "supervisor": lambda c, s: s.supervisor[c.supervisor_names()[0]][0],
    },
)
