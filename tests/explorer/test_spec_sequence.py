"""``Seq``, the spec language's TLA+ sequence: ``Append`` and ``Tail`` share one buffer and keep the
hash, and must still behave exactly as the tuple they stand for (docs/spec-language.md)."""

from __future__ import annotations

import importlib.util
import pickle
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import spec.function
from tests.compiled import fresh_interpreter

SOURCE = Path(spec.function.__file__ or "").with_name("function.py")


def _source() -> ModuleType:
    """``spec/function.py`` run as Python, whichever of it the spec imported (compiled or not)."""
    found = importlib.util.spec_from_file_location("function_source", SOURCE)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


MODULES = {"as imported": spec.function, "source": _source()}


@pytest.fixture(params=sorted(MODULES))
def fn(request: pytest.FixtureRequest) -> ModuleType:
    return MODULES[request.param]


@pytest.mark.parametrize("appends", [0.5, 0.6])
def test_shared_sequences_behave_as_the_tuples_they_stand_for(fn: ModuleType, appends: float) -> None:
    walk(fn, appends)


COMPILED_WALK = """
from model_checks import conformance
import spec.function
from tests.explorer.test_spec_sequence import walk
walk(spec.function, 0.5)
walk(spec.function, 0.6)
print(conformance.spec_values_kind(), spec.function.__file__)
"""


@pytest.mark.timeout(120)
def test_the_compiled_sequences_walk_alike() -> None:
    """The same walk where the spec's functions run compiled (decided before the spec is imported)."""
    kind, file = fresh_interpreter(COMPILED_WALK, pure=False).split()
    if kind != "compiled":
        pytest.skip(f"the spec's functions are not compiled here ({kind})")
    assert not file.endswith(".py")


def walk(fn: ModuleType, appends: float) -> None:
    """A random walk of ``Append``/``Tail`` from many sequences sharing buffers: every sequence
    made, and every older one, holds its tuple's elements; equality and hashes follow the tuples."""
    rng = random.Random(7)
    made: list[tuple[Any, tuple[object, ...]]] = [(fn.Seq(), ())]
    for _ in range(6_000):
        q, t = rng.choice(made[-40:]) if rng.random() < 0.9 else rng.choice(made)
        if rng.random() < appends:
            e = (rng.randint(0, 3), rng.choice("ab"))
            q2, t2 = fn.Append(q, e), (*t, e)
        elif t:
            assert fn.Head(q) == t[0]
            q2, t2 = fn.Tail(q), t[1:]
        else:
            continue
        assert tuple(q2) == t2 and len(q2) == len(t2) and bool(q2) == bool(t2) and repr(q2) == repr(t2)
        assert q2 == fn.Seq(t2) and hash(q2) == hash(fn.Seq(t2))
        if t2:
            assert q2[0] == t2[0] and q2[-1] == t2[-1]
        made.append((q2, t2))
    for q, t in made:
        assert tuple(q) == t  # no later Append or Tail changed what an older sequence holds
    for _ in range(5_000):
        (a, ta), (b, tb) = rng.choice(made), rng.choice(made)
        assert (a == b) == (ta == tb) and (a != b) == (ta != tb)
        assert ta != tb or hash(a) == hash(b)


def test_a_sequence_is_never_a_tuple(fn: ModuleType) -> None:
    assert fn.Seq() != () and fn.Seq([1, 2]) != (1, 2) and fn.Seq([1, 2]) == fn.Seq((1, 2))
    with pytest.raises(IndexError):
        fn.Head(fn.Seq())
    with pytest.raises(IndexError):
        fn.Tail(fn.Seq())
    with pytest.raises(IndexError):
        fn.Seq([1])[1]


def test_a_queue_that_keeps_moving_holds_a_bounded_buffer(fn: ModuleType) -> None:
    """Dropped elements are let go once they outnumber the held ones: a queue of 100 through which
    100,000 messages pass keeps a buffer of at most about twice that, not 100,000."""
    q = fn.Seq(range(100))
    for k in range(100, 100_100):
        q = fn.Tail(fn.Append(q, k))
        assert len(q._items) <= 2 * len(q) + 64
    assert tuple(q) == tuple(range(100_000, 100_100)) and q == fn.Seq(range(100_000, 100_100))


def test_a_sequence_pickles_by_value_and_is_hashed_again() -> None:
    q = spec.function.Tail(spec.function.Append(spec.function.Seq(["x", "y"]), "z"))
    back = pickle.loads(pickle.dumps(q))  # another process would hash "y" and "z" otherwise
    assert back == q and hash(back) == hash(spec.function.Seq(["y", "z"])) and tuple(back) == ("y", "z")
