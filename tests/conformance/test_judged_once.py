"""``JudgedOnce``: a search's distinct traces judged once, a refused trace judged every time."""

from __future__ import annotations

from collections.abc import Sequence

from model_checks.conformance.judged_once import JudgedOnce


def test_an_allowed_trace_is_judged_once_and_its_verdict_returned_again() -> None:
    calls: list[tuple[str, ...]] = []

    def judge(lines: Sequence[str]) -> int:
        calls.append(tuple(lines))
        return len(lines)

    once: JudgedOnce[int] = JudgedOnce(judge, keep=lambda n: n > 0)
    assert [once(["h", "a"]), once(["h", "a"]), once(["h", "b"]), once(["h", "a"])] == [2, 2, 2, 2]
    assert calls == [("h", "a"), ("h", "b")]
    assert (once.seen, once.judged) == (4, 2)


def test_what_is_not_kept_is_judged_every_time_it_is_shown() -> None:
    once: JudgedOnce[bool] = JudgedOnce(lambda lines: lines[-1] == "ok", keep=bool)
    assert [once(["h", "bad"]) for _ in range(3)] == [False, False, False]
    assert (once.seen, once.judged) == (3, 3)


def test_distinct_traces_get_their_own_verdicts() -> None:
    once: JudgedOnce[str] = JudgedOnce(lambda lines: "|".join(lines), keep=lambda v: True)
    assert [once(["h", "a"]), once(["h", "b"]), once(["h", "a"])] == ["h|a", "h|b", "h|a"]
    assert (once.seen, once.judged) == (3, 2)
