"""States on the wire between explorer processes: flat tuples for ``marshal``, pickle as the fallback.

Pickling a state (a ``NamedTuple`` of ``Function`` objects) costs more than
generating it. A state whose fields are plain values and ``Function`` objects
over plain values is sent instead as a tuple of ints, strings and tuples, which
``marshal`` writes and reads in C; the receiver rebuilds the ``Function``
objects, sharing one key index per domain. Anything ``marshal`` refuses (a
nested ``NamedTuple``, say) makes the whole batch go through ``pickle``, which is
slower but always right. Decoding gives a value equal to the one encoded, with
the same hash within one hash seed (forked processes share their parent's; Ray's
workers do not, and hash what they receive again).

A batch of record states (``Codec.dump_batch``) goes further: each distinct field
value once, and per state an index per field, in flat arrays: encoding and decoding
a batch are a few C loops over it, not Python code per state and field.
"""

from __future__ import annotations

import marshal
import pickle
import sys
from array import array
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from functools import partial
from itertools import chain, count
from typing import Any

from spec.language import Function

_MARSHAL, _PICKLE = b"m", b"p"
# A batch of records as a table of distinct field values plus field indexes (``Codec.dump_batch``).
_TABLE_MARSHAL, _TABLE_PICKLE = b"T", b"P"
# One batch entry as the explorer holds it: (fingerprint, state, parent gid, switches, pid).
Entry = tuple[int, Any, int, int, int]


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

    def intern_step(self, state: Any, parent: Any) -> Any:
        """``intern(state)`` for a successor of ``parent``, a state already interned: the fields
        it shares with ``parent`` (the same objects: most of them, since a step changes one or
        two) are canonical already, so only the others are looked up (1.74 -> 1.25 µs a state:
        docs/scale-out.md, "Session 21")."""
        record = self._record
        if type(state) is not record or type(parent) is not record:
            return self.intern(state)
        canonical = self._canonical
        return tuple.__new__(
            record,
            [
                v if v is p or type(v) is not Function else canonical.setdefault(v, v)
                for v, p in zip(state, parent, strict=True)
            ],
        )

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

    def dump_batch(
        self, entries: Iterable[Sequence[Any]], hashes: list[int] | None
    ) -> tuple[bytes, list[Any]]:
        """``(state, parent gid, switches, pid)`` entries as one bytes object; ``hashes``: their
        fingerprints, sent along when the receiver may trust them (one hash seed), else ``None``.
        Also the states again, interned (``intern``), for the sender to remember as sent.

        Successors crossing to one owner in a layer share most of their field values (a step
        changes one or two fields), so a record batch is a table of the distinct field values,
        each encoded once, and per state one index per field, with the parents, switches and
        pids, as flat machine arrays (``array.tobytes``): building it is a few C loops over the
        batch (a ``defaultdict`` numbering values as they are first met), not Python code per
        field, and decoding rebuilds each distinct ``Function`` once per batch. Values are
        numbered with their type, so that ``1`` and ``True`` as two fields stay what they were.
        Inside a tuple or a ``Function`` equal values are one value whatever their type
        (``(True, 'x')`` may come back as ``(1, 'x')``, ``0.0`` as ``-0.0``): equal states are one
        state to every engine's seen-set, so this changes which of two equal states stands for
        both, never which states exist. Non-record states go as they are, through ``dumps``.
        """
        entries = list(entries)
        states = [e[0] for e in entries]
        record = self._record
        if record is None or any(type(state) is not record for state in states):
            sent_hashes: list[int | None] = [*hashes] if hashes is not None else [None] * len(states)
            batch = [
                (h, self.encode(e[0]), e[1], e[2], e[3]) for h, e in zip(sent_hashes, entries, strict=True)
            ]
            return dumps(batch), [self.intern(state) for state in states]
        numbering: defaultdict[tuple[type, Any], int] = defaultdict(count().__next__)
        flat = list(chain.from_iterable(states))
        ids = array("I", map(numbering.__getitem__, zip(map(type, flat), flat, strict=True)))
        table = [(v._keys, v._values) if kind is Function else (v,) for kind, v in numbering]
        body = (
            len(record._fields),
            table,
            ids.tobytes(),
            array("q", [e[1] for e in entries]).tobytes(),
            array("i", [e[2] for e in entries]).tobytes(),
            array("i", [e[3] for e in entries]).tobytes(),
            array("q", hashes).tobytes() if hashes is not None else b"",
            sys.byteorder,
        )
        try:
            data = _TABLE_MARSHAL + marshal.dumps(body)
        except ValueError:  # a field value marshal cannot write
            data = _TABLE_PICKLE + pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL)
        # Interned, each distinct value once: what ``intern`` gives, without its per-field loop.
        canonical = self._canonical
        values = [canonical.setdefault(v, v) if kind is Function else v for kind, v in numbering]
        return data, _records(record, values, ids, len(record._fields))

    def load_batch(self, data: bytes, rehash: bool) -> list[Entry]:
        """A batch of ``dump_batch`` as ``(fingerprint, state, parent gid, switches, pid)``
        entries; ``rehash``: hash the states here (the sender's hashes mean nothing here, or
        were not sent). The states equal those sent, and equal values share one object."""
        tag = data[:1]
        if tag not in (_TABLE_MARSHAL, _TABLE_PICKLE):
            out: list[Entry] = []
            for h, encoded, parent, sw, pid in loads(data):
                state = self.decode(encoded)
                out.append((hash(state) if rehash or h is None else h, state, parent, sw, pid))
            return out
        body = memoryview(data)[1:]
        width, table, ids_b, parents_b, sw_b, pid_b, hashes_b, order = (
            marshal.loads(body) if tag == _TABLE_MARSHAL else pickle.loads(body)
        )
        if order != sys.byteorder:
            raise ValueError("an explorer batch from a machine of the other byte order")
        record = self._record
        if record is None:
            raise ValueError("a batch of records sent to an explorer of non-record states")
        functions = self._functions
        values = [
            (functions[f] if f in functions else self._function(f)) if len(f) == 2 else f[0] for f in table
        ]
        ids = array("I")
        ids.frombytes(ids_b)
        states = _records(record, values, ids, width)
        hashes: Iterable[int] = map(hash, states) if rehash or not hashes_b else array("q", hashes_b)
        return list(
            zip(hashes, states, _ints("q", parents_b), _ints("i", sw_b), _ints("i", pid_b), strict=True)
        )

    def _function(self, data: tuple[tuple[Hashable, ...], tuple[Any, ...]]) -> Function[Any, Any]:
        keys, values = data
        index = self._index.get(keys)
        if index is None:
            index = self._index[keys] = {k: n for n, k in enumerate(keys)}
        made: Function[Any, Any] = Function(keys, values, index)
        fn = self._canonical.setdefault(made, made)
        self._functions[data] = fn
        return fn


def _records(record: type, values: list[Any], ids: array[int], width: int) -> list[Any]:
    """Records of ``width`` fields each, field ``k`` of state ``n`` being ``values[ids[n * width + k]]``."""
    fields = map(values.__getitem__, ids)
    # ``width`` consecutive field values per state: ``zip`` of one iterator repeated; a record
    # type's ``_make`` is this ``tuple.__new__`` behind a Python call.
    return list(map(partial(tuple.__new__, record), zip(*[fields] * width, strict=False)))


def _ints(code: str, data: bytes) -> list[int]:
    values = array(code)
    values.frombytes(data)
    return values.tolist()


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
