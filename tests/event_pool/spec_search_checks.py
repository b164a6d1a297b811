"""How the event pool's two trace engines are held to agree (test_spec_search.py,
test_spec_search_runs.py, test_spec_search_harness.py, test_spec_deferred.py): the hand-written
``FORMAT`` and the streaming search of the spec's own actions (``trace.spec_search.SPEC_FORMAT``).

They give the same verdict kind (and prefix flag) always, and name the same seq and line always
but in one case (``unanswered_wait``): a trace judged complete (``--complete``, no ``stop_end``)
whose end leaves a pool thread asleep beside listed work. The fast engine names, as its seq, the
wait of that thread that never returned; the search names no seq (the end is not an event).
Also here: single edits of a valid trace (``edits``)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from model_checks.conformance.lines import validate_with
from model_checks.conformance.verdict import NOT_ALLOWED, Verdict
from model_checks.designs.event_pool.trace import validate_lines
from model_checks.designs.event_pool.trace.spec_search import SPEC_FORMAT


def spec_verdict(lines: list[str], complete: bool = False) -> Verdict:
    return validate_with(SPEC_FORMAT, lines, engine="spec", complete=complete)


def unanswered_wait(lines: list[str], complete: bool, fast: Verdict, spec: Verdict) -> bool:
    """The one case where the seqs may differ (this module's doc): judged complete, both reject the
    end; the fast engine names a ``wait`` after which its thread logged nothing, the search no seq."""
    if not complete or fast.code != NOT_ALLOWED or spec.code != NOT_ALLOWED:
        return False
    if fast.rule != 9 or fast.seq is None or spec.seq is not None or (fast.line, spec.line) != (None, None):
        return False
    waited = json.loads(lines[fast.seq])  # line 0 is the header: seq N is on line index N
    later = (json.loads(line)["thread"] for line in lines[fast.seq + 1 :])
    return waited["event"] == "wait" and waited["thread"] not in later


def check_agreement(lines: list[str], complete: bool, fast: Verdict, spec: Verdict) -> None:
    assert (fast.code, fast.prefix) == (spec.code, spec.prefix), (fast.message, spec.message)
    if not unanswered_wait(lines, complete, fast, spec):
        assert (fast.seq, fast.line) == (spec.seq, spec.line), (fast.message, spec.message)


def agree(lines: list[str], complete: bool = False) -> tuple[Verdict, Verdict]:
    """Both engines' verdicts, after checking they are of one kind and name one seq (bar one case)."""
    fast, spec = validate_lines(lines, complete=complete), spec_verdict(lines, complete)
    check_agreement(lines, complete, fast, spec)
    return fast, spec


def renumbered(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps({**e, "seq": n}) for n, e in enumerate(events, start=1)]


def edits(lines: list[str], rng: random.Random, count: int) -> Iterator[tuple[str, list[str]]]:
    """``count`` single edits of a trace, seqs renumbered: an event dropped, two swapped, a run repeated."""
    head, events = lines[0], [json.loads(line) for line in lines[1:]]
    runs = [i for i, e in enumerate(events) if e["event"] == "run"]
    for _ in range(count):
        i = rng.randrange(len(events) - 1)
        dropped = events[:i] + events[i + 1 :]
        yield f"drop {i}", [head, *renumbered(dropped)]
        swapped = [*events[:i], events[i + 1], events[i], *events[i + 2 :]]
        yield f"swap {i}", [head, *renumbered(swapped)]
        if runs:
            j = rng.choice(runs)
            yield f"repeat run {j}", [head, *renumbered([*events[: j + 1], events[j], *events[j + 1 :]])]
