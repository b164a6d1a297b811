"""The event pool's two engines agree (spec_search_checks.py) on generated traces and on traced runs
of the reference on real threads, valid all, and on single edits of them (an event dropped, two
swapped, a run repeated), mostly invalid."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest

from model_checks.conformance.verdict import ALLOWED, NOT_ALLOWED
from model_checks.designs.event_pool.trace.generate import lines as generated
from model_checks.designs.event_pool.trace.traced import trace_lines
from reference.event_pool import EventPool, StopMode
from reference.tracing import RecordingTracer
from tests.event_pool.spec_search_checks import agree, edits

# ------------------------------------------------------------------ generated traces and their edits


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(4))
def test_generated_traces_and_their_edits(seed: int) -> None:
    stop = "discard" if seed % 2 else "drain"
    lines = list(generated(150, threads=1 + seed % 3, seed=seed, stop=stop, timeouts=0.05, cancels=0.05))
    fast, _ = agree(lines)
    assert fast.code == ALLOWED and not fast.prefix
    kinds = set()
    for how, edited in edits(lines, random.Random(seed), 15):
        kinds.add(agree(edited)[0].code)
        # The end judged: a prefix cut anywhere, with --complete.
        if how.startswith("drop"):
            agree(edited[: len(edited) // 2], complete=True)
    assert NOT_ALLOWED in kinds  # the edits did break traces


@pytest.mark.timeout(120)
def test_longer_generated_traces_at_the_benchs_defaults_agree() -> None:
    """2,000 events each, four threads, the generator's defaults (as the bench writes them): before
    the search bound ``wait`` to its log, it refused seeds 1, 4 and 5 (a stale signal coalesced)."""
    for seed in range(6):
        lines = list(generated(2_000, seed=seed))
        fast, _ = agree(lines)
        assert fast.code == ALLOWED and not fast.prefix, (seed, fast.message)


# ------------------------------------------------------------------ real threads


def real_run(threads: int, posts: int, mode: StopMode, seed: int) -> list[str]:
    """A traced run of the reference on real threads: two posters, callbacks that post now and then."""
    tracer = RecordingTracer()
    pool = EventPool(threads, tracer=tracer, wait_timeout=0.001 if seed % 2 else None)
    rng = random.Random(seed)
    again = [rng.random() < 0.2 for _ in range(posts)]

    def work(i: int) -> Callable[[], None]:
        def call() -> None:
            if again[i]:
                pool.post(lambda: None)

        return call

    def poster(first: int) -> None:
        for i in range(first, posts, 2):
            pool.post(work(i))

    other = threading.Thread(target=poster, args=(1,), name="poster")
    other.start()
    poster(0)
    pool.post("not callable")  # type: ignore[arg-type]  # refused: invalid_argument
    other.join()
    pool.stop(mode)
    return trace_lines(tracer)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(4))
def test_real_thread_runs_and_their_edits(seed: int) -> None:
    mode = StopMode.DISCARD if seed % 2 else StopMode.DRAIN
    lines = real_run(1 + seed % 3, 40, mode, seed)
    fast, _ = agree(lines)
    assert fast.code == ALLOWED and not fast.prefix, fast.message
    for _how, edited in edits(lines, random.Random(seed), 10):
        agree(edited)
