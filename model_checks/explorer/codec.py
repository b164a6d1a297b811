"""States on the wire between explorer processes: flat tuples for ``marshal``, pickle as the fallback.

Pickling a state (a ``NamedTuple`` of ``Function`` objects) costs more than
generating it. A state whose fields are plain values and ``Function`` objects
over plain values is sent instead as a tuple of ints, strings and tuples, which
``marshal`` writes and reads in C; the receiver rebuilds the ``Function``
objects, sharing one key index per domain. Anything ``marshal`` refuses (a
nested ``NamedTuple``, say) makes the whole batch go through ``pickle``, which is
slower but always right. Decoding gives a value equal to the one encoded, with
the same hash: the processes are forked from one interpreter, so they share
its string-hash seed.
"""

from __future__ import annotations

import marshal
import pickle
from collections.abc import Hashable
from typing import Any

from spec.language import Function

_MARSHAL, _PICKLE = b"m", b"p"


class Codec:
    """Encodes states of one spec (``sample`` gives their type) and batches of them.

    A record (``NamedTuple``) state becomes a tuple with one entry per field: a
    ``Function`` is ``(keys, values)``, any other value ``(value,)``, so the length
    says which. Decoded functions are interned: equal ones are one object, which
    makes comparing states that share them cheap (tuple comparison tries identity
    first). Other states are sent as they are.
    """

    def __init__(self, sample: Any) -> None:
        cls = type(sample)
        self._record = cls if isinstance(sample, tuple) and hasattr(cls, "_make") else None
        self._functions: dict[tuple[tuple[Hashable, ...], tuple[Any, ...]], Function[Any, Any]] = {}
        self._canonical: dict[Function[Any, Any], Function[Any, Any]] = {}
        self._index: dict[tuple[Hashable, ...], dict[Hashable, int]] = {}

    def intern(self, state: Any) -> Any:
        """``state`` with each ``Function`` field replaced by the one equal object kept for it.

        With several processes the explorer stores interned states: a decoded state (whose
        functions are interned too) and a successor (which shares its unchanged fields with
        the stored state it came from) then mostly meet identical objects when compared
        with a stored state, which tuple comparison settles without calling ``__eq__``.
        """
        if type(state) is not self._record:
            return state
        canonical = self._canonical
        return self._record._make([canonical.setdefault(v, v) if type(v) is Function else v for v in state])

    def encode(self, state: Any) -> Any:
        if type(state) is not self._record:
            return state
        # The hot path of the wire: the slots are read directly rather than through two
        # method calls per field.
        return tuple([(v._keys, v._values) if type(v) is Function else (v,) for v in state])

    def decode(self, data: Any) -> Any:
        if self._record is None:
            return data
        functions = self._functions
        fields = [
            (functions[f] if f in functions else self._function(f)) if len(f) == 2 else f[0] for f in data
        ]
        return self._record._make(fields)

    def _function(self, data: tuple[tuple[Hashable, ...], tuple[Any, ...]]) -> Function[Any, Any]:
        keys, values = data
        index = self._index.get(keys)
        if index is None:
            index = self._index[keys] = {k: n for n, k in enumerate(keys)}
        made: Function[Any, Any] = Function(keys, values, index)
        fn = self._canonical.setdefault(made, made)
        self._functions[data] = fn
        return fn


def dumps(batch: list[Any]) -> bytes:
    """A batch of already-encoded entries as bytes: ``marshal`` when it can, else ``pickle``."""
    try:
        return _MARSHAL + marshal.dumps(batch)
    except ValueError:
        return _PICKLE + pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> list[Any]:
    body = memoryview(data)[1:]
    if data[:1] == _MARSHAL:
        return marshal.loads(body)  # type: ignore[no-any-return]
    if data[:1] == _PICKLE:
        return pickle.loads(body)  # type: ignore[no-any-return]
    raise ValueError(f"not an explorer batch (tag {data[:1]!r})")
