"""The state fingerprint's encoder: the same reading of the heap as ``_Canon`` (``heap_walk.py``),
serialised by the C pickler and hashed (``encode``).

``_Canon`` walks every reachable object in Python: about 500 a state on the Work Lane's and the
work-stealing pool's scenarios, most of them the program's functions, classes and module data,
which no step changes. Here the C pickler walks the graph. Its memo numbers every object with
identity as first met (``_Canon``'s numbering: aliasing kept) and it serialises the built-in
containers (dict, list, tuple, set, frozenset, str, bytes, int, float, bool, None, bytearray)
itself; any other object reaches ``reducer_override``, which returns what ``_Canon._walk``
reads of it as a reduce tuple ``(_K, (tag, ...), state)`` (nothing is ever unpickled: the
bytes are only hashed, BLAKE2b-256, so two states are identified only if their serialisations
are equal or the digests collide).

Differences with ``_Canon``, each of which can only separate states it identifies, never the
reverse: the pickler memoises tuples, strings and bytes by identity too (one tuple shared in two
places and two equal tuples are two states); the static section holds every seeded object, not
only those the state reaches; and a state met before an object was seeded and after it is
written two ways (the dump starts with the seed's size, which fixes what each memo index means).
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import itertools
import operator
import pickle
from typing import Any

from model_checks.harness.rt.dict_versions import _value, _version_view
from model_checks.harness.rt.object_kinds import _HEAPTYPE
from model_checks.harness.rt.reducers import _K, _REDUCERS, _r_class, _reducer
from model_checks.harness.rt.seeds import _SEEDS, _seed_check, _Seeds


class _Encoder(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if obj is _K:
            return NotImplemented  # the tag function itself: pickled by name
        t = type(obj)
        r = _REDUCERS.get(t)
        if r is None:
            r = _REDUCERS[t] = _reducer(t)
        reduced = r(obj)
        seeds = self.seeds
        if seeds is not None and (id(obj) in seeds.pre or (r is _r_class and not obj.__flags__ & _HEAPTYPE)):
            # (a static C type is no object of the search, and is not tracked by the collector)
            check = _seed_check(t, r)
            if check is not None:
                seeds.add(obj, reduced, check)
                return reduced
        if self.inline is not None:
            self.inline.append(obj)
        return reduced

    seeds: _Seeds | None = None
    inline: list[object] | None = None  # the objects read here, not seeded (static section)


class _Section:
    """The static section as last written: its bytes, the pickler's memo after it, and what
    says it is still what a new writing would give (``valid``)."""

    def __init__(self, seeds: _Seeds) -> None:
        self.generation = seeds.generation
        buf = io.BytesIO()
        buf.write(len(seeds.memo).to_bytes(8, "little"))
        p = _Encoder(buf, protocol=pickle.HIGHEST_PROTOCOL)
        p.memo = seeds.memo
        p.seeds = seeds
        p.inline = []
        p.dump(seeds.static)
        self.hashed = hashlib.blake2b(buf.getbuffer(), digest_size=32)  # (copied for each state)
        self.memo = p.memo.copy()  # (its values keep every object written alive: no id reused)
        # what the bytes read that can change without ``seeds.generation`` saying so: the
        # built-in mutable containers (by version, or by the identities of their items) and
        # the objects read inline (only stateless ones allow keeping the section)
        self.reusable = self.generation == seeds.generation and all(type(x) is object for x in p.inline)
        self.dict_views: list[ctypes.c_uint64] = []
        self.sequences: list[Any] = []
        self.bytearrays: list[bytearray] = []
        for _, x in self.memo.values():
            t = type(x)
            if t is dict:
                self.dict_views.append(_version_view(x))
            elif t is list or t is set:
                self.sequences.append(x)
            elif t is bytearray:
                self.bytearrays.append(x)
        self.versions = list(map(_value, self.dict_views))
        self.lengths = list(map(len, self.sequences))
        self.items = list(itertools.chain.from_iterable(self.sequences))
        self.contents = list(map(bytes, self.bytearrays))

    def valid(self, seeds: _Seeds) -> bool:
        return (
            self.reusable
            and self.generation == seeds.generation
            and list(map(_value, self.dict_views)) == self.versions
            and list(map(len, self.sequences)) == self.lengths
            and all(map(operator.is_, itertools.chain.from_iterable(self.sequences), self.items))
            and list(map(bytes, self.bytearrays)) == self.contents
        )


def encode(x: object) -> bytes:
    """The digest of the object graph reachable from ``x`` (raises ``Opaque`` on hidden state),
    after the static section of the search's seeded objects."""
    buf = io.BytesIO()
    p = _Encoder(buf, protocol=pickle.HIGHEST_PROTOCOL)
    seeds = _SEEDS[0]
    if seeds is None:
        p.dump(x)
        return hashlib.blake2b(buf.getbuffer(), digest_size=32).digest()
    seeds.refresh()
    section = seeds.section
    if section is None or not section.valid(seeds):
        section = seeds.section = _Section(seeds)
    # one pickle in two parts: the section's memo goes on into the state's
    p.memo = section.memo
    p.seeds = seeds
    p.dump(x)
    h = section.hashed.copy()
    h.update(buf.getbuffer())
    return h.digest()
