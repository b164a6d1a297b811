"""Stop(discard)'s drops of the injector's tasks, split over several ``discard`` events, in another
order, or logged by another thread: rule 8 allows them, the fast engine did, and the spec engine
refused them (the third outside review, session 47, T3). The traces are the corpus's
(tests/work_stealing/corpus, both engines' verdicts); here the spec engine's own words, and the
deferral it relies on, with ``DiscardQueued`` (``trace/discards.py``) in the searched spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.conformance import validate_file
from model_checks.designs.work_stealing.trace.grow import SEARCHED
from model_checks.designs.work_stealing.trace.spec_binding import DEFERRED, MOVES_TO, local_pc
from spec import work_stealing_open as wo
from tests.conformance.deferral_checks import reachable_violations

pytestmark = pytest.mark.timeout(300)

CORPUS = Path(__file__).parent / "corpus"

# Two roots, so that Stop(discard) may find both in the injector and drop them one at a time.
TWO_ROOTS = wo.OpenConstants(workers=2, capacity=1, tasks=(("a", ()), ("b", ())), roots=("a", "b"))


@pytest.mark.parametrize(
    "name",
    [
        "valid_discard_injector_split_in_order.jsonl",
        "valid_discard_injector_reverse_order.jsonl",
        "valid_discard_injector_split_by_client_and_worker.jsonl",
        "valid_discard_part_then_a_worker_pops_and_discards_the_rest.jsonl",
    ],
)
def test_the_spec_engine_takes_the_injectors_discard_split_reordered_or_by_another_thread(name: str) -> None:
    v = validate_file(CORPUS / name, engine="spec", complete=True)
    assert (v.code, v.prefix) == (0, False), v.message


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("invalid_r8_discard_lists_a_task_twice_in_one_event.jsonl", "'a', which was discarded before"),
        ("invalid_r8_discard_twice.jsonl", "'a', which was discarded before"),
        ("invalid_r8_discard_of_a_task_that_ran.jsonl", "'a', which already ran"),
        ("invalid_r8_discard_of_a_task_never_submitted.jsonl", "'z', which was never introduced"),
        ("invalid_r8_discard_in_drain.jsonl", "but stop(drain) began"),
        ("invalid_r8_empty_discard_before_stop.jsonl", "no tasks, but no stop began"),
    ],
)
def test_a_refused_discard_says_which_task_and_why(name: str, words: str) -> None:
    v = validate_file(CORPUS / name, engine="spec")
    assert (v.code, v.rule) == (1, 8), v.message
    assert words in v.message, v.message


def test_the_deferral_holds_with_discards_one_at_a_time() -> None:
    # A worker's unlogged re-check that saw work does not move past a drop of the injector's task.
    assert not reachable_violations(
        SEARCHED, TWO_ROOTS, DEFERRED, local=local_pc, moves_to=MOVES_TO, at_least=1_000
    )
    wrong = {**DEFERRED, "RecheckFindsWork": DEFERRED["RecheckFindsWork"] - {"DiscardQueued"}}
    assert ("RecheckFindsWork", "DiscardQueued") in reachable_violations(
        SEARCHED, TWO_ROOTS, wrong, local=local_pc, moves_to=MOVES_TO, at_least=1_000
    )
