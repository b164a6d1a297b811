"""spec.memory: SC writes through, TSO buffers stores per thread in FIFO order."""

from __future__ import annotations

import pytest

from spec.memory import Memory


def _mem(model: str) -> Memory:
    return Memory.initial(model, ("p", "q"), [("x", 0), ("y", 0)])


def test_sc_stores_are_seen_by_everyone_at_once() -> None:
    mem = _mem("sc").store("p", "x", 1)
    assert mem.load("q", "x") == 1
    assert mem.flush("p") is None
    assert mem.fence("p") == mem


def test_tso_store_is_seen_by_its_thread_only_until_flushed() -> None:
    mem = _mem("tso").store("p", "x", 1).store("p", "x", 2)
    assert mem.load("p", "x") == 2  # its own newest store
    assert mem.load("q", "x") == 0  # still in p's buffer
    once = mem.flush("p")
    assert once is not None and once.load("q", "x") == 1  # oldest first: FIFO
    twice = once.flush("p")
    assert twice is not None and twice.load("q", "x") == 2 and twice.flush("p") is None


def test_tso_allows_store_load_reordering_and_a_fence_forbids_it() -> None:
    """Dekker: p stores x then loads y, q stores y then loads x; both may read 0 under TSO."""
    mem = _mem("tso").store("p", "x", 1).store("q", "y", 1)
    assert mem.load("p", "y") == 0 and mem.load("q", "x") == 0
    fenced = mem.fence("p")
    assert fenced.load("q", "x") == 1
    assert fenced.pending("p") == () and fenced.pending("q") == (("y", 1),)


def test_cas_drains_the_buffer_then_compares_in_memory() -> None:
    mem = _mem("tso").store("p", "y", 7)
    after, won = mem.cas("p", "x", 0, 1)
    assert won and after.pending("p") == () and after.load("q", "y") == 7 and after.load("q", "x") == 1
    again, lost = after.cas("q", "x", 0, 5)
    assert not lost and again.load("p", "x") == 1


def test_publish_writes_memory_directly_and_renaming_permutes() -> None:
    mem = _mem("tso").publish([("y", 3)]).store("p", "x", 1)
    assert mem.load("q", "y") == 3
    swapped = mem.renamed(lambda t: {"p": "q", "q": "p"}[str(t)], lambda loc: loc)
    assert swapped.pending("q") == (("x", 1),) and swapped.pending("p") == ()


def test_bad_model_and_unknown_location_are_refused() -> None:
    with pytest.raises(ValueError, match="memory model"):
        Memory.initial("arm", ("p",), [("x", 0)])
    with pytest.raises(KeyError):
        _mem("tso").store("p", "z", 1)
