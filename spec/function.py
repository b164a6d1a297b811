"""TLA+ function values for lanecheck specifications: ``status[lane]`` is a ``Function``, and
``f.except_(k, v)`` is ``[f EXCEPT ![k] = v]`` (``replace_at`` on its tuple of values); and TLA+
sequences, the functions of ``1..n`` (``Seq``, with ``Append``, ``Head`` and ``Tail``).

Part of the spec language (``spec.language`` offers these names); pure, like all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Final, Generic, TypeVar

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
        # Keys and values have one length (``__init__`` checks): no ``strict``, whose keyword
        # argument takes ``zip`` off its fast call (the trace search calls this in every step).
        return zip(self._keys, self._values)  # noqa: B905

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
    # One copy, one store: compiled, this is a few calls where two slices and their unpacking
    # into a new tuple were many (``except_`` builds every successor state's changed functions).
    changed = list(values)
    changed[i] = value
    return tuple(changed)


# ============================================================================ sequences

# A sequence's hash is a polynomial in its elements' hashes, ``sum(h(e_i) * BASE^(n-1-i))`` modulo a
# prime below 2^31 (so that every product fits a machine word): appending an element or dropping
# the first updates it in constant time, where a tuple rehashes every element on every hash.
_MODULUS: Final = 2_147_483_647  # 2^31 - 1, a prime
_BASE: Final = 1_000_003
_BASE_INVERSE: Final = pow(_BASE, _MODULUS - 2, _MODULUS)  # BASE * BASE_INVERSE = 1 (mod MODULUS)
# A sequence's buffer is copied (without the elements dropped from its front) once that many are
# dropped and they outnumber the elements it holds: its memory stays bounded by what it holds.
_COMPACT_AFTER: Final = 64


def _element_hash(e: object) -> int:
    return hash(e) % _MODULUS


class Seq(Generic[V]):
    """An immutable TLA+ sequence ``<<e1, ..., en>>``: hashable, equal to the sequences that hold
    equal elements in the same order (never to a tuple), shown as the tuple of its elements.

    ``Append(q, e)`` and ``Tail(q)`` take constant time, where a tuple is copied and rehashed
    whole: a queue of hundreds of messages is one step's change in a state. Sequences share one
    buffer: ``Append`` extends it in place when nothing lies past ``q``'s end, shares it when what
    lies there equals ``e`` (another sequence appended it), and copies ``q``'s part otherwise;
    each sequence reads only its own part, so none ever sees another change.
    """

    __slots__ = ("_end", "_hash", "_items", "_power", "_start")

    _items: list[V]  # shared: this sequence is ``_items[_start:_end]``
    _start: int
    _end: int
    _hash: int  # the polynomial above
    _power: int  # BASE^n mod MODULUS, n = the length

    def __init__(
        self,
        values: Iterable[V] = (),
        _items: list[V] | None = None,
        _start: int = 0,
        _end: int = 0,
        _hash: int = 0,
        _power: int = 1,
    ) -> None:
        if _items is None:  # ``<<v1, ..., vn>>``; the other arguments are ``Append``'s and ``Tail``'s
            _items = list(values)
            _end = len(_items)
            for v in _items:
                _hash = (_hash * _BASE + _element_hash(v)) % _MODULUS
                _power = _power * _BASE % _MODULUS
        self._items = _items
        self._start = _start
        self._end = _end
        self._hash = _hash
        self._power = _power

    def __len__(self) -> int:
        return self._end - self._start

    def __bool__(self) -> bool:
        return self._end > self._start

    def __getitem__(self, i: int) -> V:
        """The element at ``i`` from 0 (TLA+ counts from 1: ``q[1]`` is ``q[0]`` here); negative
        from the end, as a tuple's."""
        n = self._end - self._start
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Seq index out of range")
        return self._items[self._start + i]

    def __iter__(self) -> Iterator[V]:
        return iter(self._items[self._start : self._end])

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Seq):
            return NotImplemented
        start, n = self._start, self._end - self._start
        other_start = other._start
        if n != other._end - other_start or self._hash != other._hash:
            return False
        mine, theirs = self._items, other._items
        if mine is theirs and start == other_start:
            return True
        for k in range(n):
            a, b = mine[start + k], theirs[other_start + k]
            if a is not b and a != b:
                return False
        return True

    def __reduce__(self) -> tuple[Callable[..., Seq[V]], tuple[object, ...]]:
        # By value: the hash is computed again where it arrives (another process may hash a
        # string otherwise: model_checks/explorer/ray/portable.py).
        return Seq, (tuple(self._items[self._start : self._end]),)

    def __repr__(self) -> str:
        return repr(tuple(self._items[self._start : self._end]))


def Append(q: Seq[V], e: V) -> Seq[V]:
    """TLA+ ``Append(q, e)``: ``q`` with ``e`` after its last element."""
    items, start, end = q._items, q._start, q._end
    if end == len(items):
        items.append(e)
    else:
        there = items[end]
        if there is not e and there != e:
            items = items[start:end]
            items.append(e)
            start, end = 0, end - start
    return Seq(
        (),
        items,
        start,
        end + 1,
        (q._hash * _BASE + _element_hash(e)) % _MODULUS,
        q._power * _BASE % _MODULUS,
    )


def Head(q: Seq[V]) -> V:
    """TLA+ ``Head(q)``: the first element (``q`` not empty)."""
    if q._end == q._start:
        raise IndexError("Head of the empty sequence")
    return q._items[q._start]


def Tail(q: Seq[V]) -> Seq[V]:
    """TLA+ ``Tail(q)``: ``q`` without its first element (``q`` not empty)."""
    items, start, end = q._items, q._start, q._end
    if end == start:
        raise IndexError("Tail of the empty sequence")
    power = q._power * _BASE_INVERSE % _MODULUS  # BASE^(n-1): the first element's weight
    h = (q._hash - _element_hash(items[start]) * power) % _MODULUS
    start += 1
    if start >= _COMPACT_AFTER and start > end - start:
        items, start, end = items[start:end], 0, end - start
    return Seq((), items, start, end, h, power)
