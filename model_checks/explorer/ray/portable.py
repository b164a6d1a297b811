"""Functions that cross from one Ray process to another arrive with a hash computed there.

A ``Function`` keeps its hash in a slot, and pickle copies slots: in a process with another
string-hash seed (every Ray worker; in Python 3.11 even ``hash(None)`` differs between processes)
the copy would carry a hash that equal local functions do not have, and compare unequal to them.
``install()`` makes pickle send a ``Function`` as its domain and values, rebuilt (hash computed
afresh, the domain's key index shared) by ``rebuild`` on arrival. It is needed in every process
that *sends* functions: the Ray workers and the driver.
"""

from __future__ import annotations

import copyreg
from collections.abc import Hashable
from typing import Any

from spec.language import Function

_INDEXES: dict[tuple[Hashable, ...], dict[Hashable, int]] = {}


def rebuild(keys: tuple[Hashable, ...], values: tuple[Any, ...]) -> Function[Any, Any]:
    index = _INDEXES.get(keys)
    if index is None:
        index = _INDEXES[keys] = {k: n for n, k in enumerate(keys)}
    return Function(keys, values, index)


def _reduce(fn: Function[Any, Any]) -> tuple[Any, tuple[Any, ...]]:
    return rebuild, (fn.domain(), fn.values())


def install() -> None:
    """Pickle functions by value from now on, in this process (idempotent)."""
    copyreg.pickle(Function, _reduce)
