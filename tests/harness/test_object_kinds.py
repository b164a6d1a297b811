"""``object_kinds._kind``: the one decision, by type, of how the state fingerprint's walk
(``heap_walk._Canon``) and its encoder (``reducers._reducer``) read an object neither reads as one
of its exact types."""

from __future__ import annotations

import logging
import random
import re

import pytest

from model_checks.harness.rt import fingerprint as fp
from model_checks.harness.rt.object_kinds import (
    _BASE,
    ATOM,
    BUILTIN,
    CLASS,
    EXCEPTION,
    INSTANCE,
    ITERATOR,
    OPAQUE,
    _kind,
)
from model_checks.harness.rt.reducers import _BY_KIND, _reducer


class Plain:
    def __init__(self) -> None:
        self.x = 1


class Counts(dict[str, int]):
    pass


class Slotted:
    __slots__ = ("a",)


class SeededRandom(random.Random):  # a C base whose state no attribute shows
    pass


KINDS: list[tuple[object, str]] = [
    (len, BUILTIN),
    (re.compile("a").match, BUILTIN),
    (list[int], ATOM),
    (int | None, ATOM),
    (logging.getLogger("lanecheck.test"), ATOM),
    (str.upper, ATOM),
    (iter([1, 2]), ITERATOR),
    (Plain, CLASS),
    (ValueError("v"), EXCEPTION),
    (SeededRandom(1), OPAQUE),
    (Plain(), INSTANCE),
    (Counts(a=1), INSTANCE),
]


@pytest.mark.parametrize(("obj", "kind"), KINDS)
def test_each_kind_and_the_encoders_reducer_for_it(obj: object, kind: str) -> None:
    t = type(obj)
    assert _kind(t) == kind
    assert _reducer(t) is _BY_KIND[kind]


def test_an_instance_keeps_its_built_in_base() -> None:
    _kind(Counts)
    _kind(Plain)
    assert _BASE[Counts] is dict and _BASE[Plain] is None


def _holding_a_random() -> Plain:
    p = Plain()
    p.x = SeededRandom(2)  # type: ignore[assignment]
    return p


@pytest.mark.parametrize("obj", [SeededRandom(1), _holding_a_random()])
def test_hidden_state_is_refused_by_the_walk_and_the_encoder(obj: object) -> None:
    with pytest.raises(fp.Opaque, match="Random"):
        fp._Canon().value(obj)
    with pytest.raises(fp.Opaque, match="Random"):
        fp.encode(obj)


def test_a_random_generator_reads_as_its_state() -> None:
    # random.Random itself (not a subclass) is read by its C state and gauss_next, past patch
    # mode's wrappers of its methods: patch mode's own generators are held in the frames the
    # state search reads (it was refused, and every state with a draw in flight unreadable)
    a, b = random.Random(1), random.Random(1)
    assert fp._Canon().value(a) == fp._Canon().value(b) and fp.encode(a) == fp.encode(b)
    b.random()
    assert fp._Canon().value(a) != fp._Canon().value(b) and fp.encode(a) != fp.encode(b)


def test_the_walk_reads_each_kind_as_the_encoder_tells_them_apart() -> None:
    # two values differing only in an instance's field, or in an exception's argument: both
    # readings must tell them apart (an instance read as an atom would not)
    for a, b in [(Plain(), Plain()), (ValueError(1), ValueError(2)), (Counts(a=1), Counts(a=2))]:
        if isinstance(a, Plain) and isinstance(b, Plain):
            b.x = 2
        assert fp._Canon().value(a) != fp._Canon().value(b)
        assert fp.encode(a) != fp.encode(b)
