"""TLA+ function values for lanecheck specifications: ``status[lane]`` is a ``Function``, and
``f.except_(k, v)`` is ``[f EXCEPT ![k] = v]`` (``replace_at`` on its tuple of values).

Part of the spec language (``spec.language`` offers both names); pure, like all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Function(Generic[K, V]):
    """An immutable TLA+ function ``[k \\in Domain |-> v]``: hashable, ordered by domain.

    Two functions over the same domain are equal when their values are; the
    domain's order is fixed at creation, so ``values()`` is canonical.
    """

    __slots__ = ("_hash", "_index", "_keys", "_values")

    _keys: tuple[K, ...]
    _index: dict[K, int]
    _values: tuple[V, ...]
    _hash: int

    def __init__(self, keys: Sequence[K], values: Iterable[V], _index: dict[K, int] | None = None) -> None:
        self._keys = tuple(keys)
        self._values = tuple(values)
        if len(self._keys) != len(self._values):
            raise ValueError(f"Function: {len(self._keys)} keys but {len(self._values)} values")
        self._index = _index if _index is not None else {k: i for i, k in enumerate(self._keys)}
        self._hash = hash(self._values)

    @classmethod
    def const(cls, keys: Sequence[K], value: V) -> Function[K, V]:
        """``[k \\in keys |-> value]``."""
        return cls(keys, [value] * len(keys))

    @classmethod
    def of(cls, keys: Sequence[K], f: Callable[[K], V]) -> Function[K, V]:
        """``[k \\in keys |-> f(k)]``."""
        return cls(keys, [f(k) for k in keys])

    def __getitem__(self, key: K) -> V:
        return self._values[self._index[key]]

    def except_(self, key: K, value: V) -> Function[K, V]:
        """``[self EXCEPT ![key] = value]``."""
        return Function(self._keys, replace_at(self._values, self._index[key], value), self._index)

    def with_values(self, values: Iterable[V]) -> Function[K, V]:
        """The same domain with new values (used by symmetry reductions)."""
        return Function(self._keys, values, self._index)

    def domain(self) -> tuple[K, ...]:
        return self._keys

    def values(self) -> tuple[V, ...]:
        return self._values

    def items(self) -> Iterator[tuple[K, V]]:
        return zip(self._keys, self._values, strict=True)

    def __iter__(self) -> Iterator[K]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Function):
            return NotImplemented
        return self._hash == other._hash and self._values == other._values and self._keys == other._keys

    def __reduce__(self) -> tuple[Callable[..., Function[K, V]], tuple[object, ...]]:
        # What pickle copies of a plain object with slots, its four slots as they are (hash too:
        # model_checks/explorer/ray/portable.py), said for a compiled ``Function``, which has none.
        return _unpickled, (self._keys, self._values, self._index, self._hash)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {v!r}" for k, v in self.items())
        return f"[{inner}]"

    def as_dict(self) -> dict[K, V]:
        return dict(self.items())


def _unpickled(
    keys: tuple[K, ...], values: tuple[V, ...], index: dict[K, int], hashed: int
) -> Function[K, V]:
    f = Function(keys, values, index)
    f._hash = hashed
    return f


def replace_at(values: tuple[V, ...], i: int, value: V) -> tuple[V, ...]:
    """The tuple ``values`` with position ``i`` set to ``value`` (the heart of EXCEPT).

    pre: 0 <= i < len(values)
    post: len(__return__) == len(values)
    post: __return__[i] == value
    post: all(__return__[j] == values[j] for j in range(len(values)) if j != i)
    """
    return (*values[:i], value, *values[i + 1 :])
