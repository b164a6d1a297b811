"""Words of the event-pool refusals the third outside review of the validators found wrong
(session 47, T7): a post whose ``to`` is no pool thread is refused by rule 1 and the spec engine
says so, not that a post picks an idle thread. The trace is the corpus's."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.conformance import ENGINES, validate_file

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_post_to_no_pool_thread_says_so(engine: str) -> None:
    v = validate_file(Path(__file__).parent / "corpus" / "invalid_r1_post_to_t01.jsonl", engine=engine)
    assert (v.code, v.seq, v.rule) == (1, 1, 1), v.message
    assert "'t01'" in v.message and "not a pool thread (t0 .. t1)" in v.message, v.message
    assert "idle" not in v.message
