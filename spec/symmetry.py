"""Symmetry reduction for specs whose processes differ only by name.

A ``@spec.symmetry`` function maps a state to one representative of its orbit under every
renaming of the interchangeable processes; the least one (by ``repr``) is canonical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations
from typing import TypeVar

S = TypeVar("S")


def least_renaming(
    names: Sequence[str],
    renamed: Callable[[dict[str, str]], S],
    quick: Callable[[S], tuple[str, ...]] | None = None,
) -> S:
    """The least of ``renamed(to)`` over every renaming ``to`` of ``names``: by ``quick`` first
    (a cheap key that nearly always decides), then, among the states it ties, by ``repr``."""
    orbit = [renamed(dict(zip(names, p, strict=True))) for p in permutations(names)]
    if quick is not None:
        least = min(quick(x) for x in orbit)
        orbit = [x for x in orbit if quick(x) == least]
    return orbit[0] if len(orbit) == 1 else min(orbit, key=repr)
