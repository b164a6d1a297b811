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

Where the C module is built (``rt/native.py``), a state's pickler reduces the objects an
execution creates most by a reducer in C (``_fingerprint_hot.c``, its table filled from
``reducers.native_entry``) that returns the Python reducers' very tuples; the section's checks
(``valid``, ``_Seeds.refresh``) run in C too. A state is written to the same bytes either way
(``tests/harness/test_fingerprint_hot.py`` compares the digests at every state of searches).
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import itertools
import operator
import pickle
from typing import Any

from model_checks.harness.rt.dict_versions import _value, _version_view, same_versions
from model_checks.harness.rt.native import NATIVE
from model_checks.harness.rt.object_kinds import _HEAPTYPE
from model_checks.harness.rt.reducers import _K, _REDUCERS, _r_class, _reducer, native_entry
from model_checks.harness.rt.seeds import _SEEDS, _seed_check, _Seeds

# per type: how the C reducer (``_fingerprint_hot.c``) reduces its objects, where it does
# (``reducers.native_entry``), filled as ``_REDUCERS`` is
_NATIVE_TABLE: dict[type, tuple[Any, ...]] = {}


class _Encoder(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if obj is _K:
            return NotImplemented  # the tag function itself: pickled by name
        t = type(obj)
        r = _REDUCERS.get(t)
        if r is None:
            r = _REDUCERS[t] = _reducer(t)
            entry = native_entry(t, r)
            if entry is not None:
                _NATIVE_TABLE[t] = entry
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


# immutable values without identity in the program's state (see ``_Section``)
_WRITTEN_AGAIN = frozenset((tuple, str, bytes, frozenset))


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
        # Each state's dump starts from a memo of what the section wrote whose identity is state:
        # the seeded objects, the containers, the objects read inline; not the immutable tuples,
        # strings and bytes, which a state writes again where it meets them (so separating fewer
        # states, not more). Renumbered in the section's order: the section's bytes fix it. The
        # whole memo (~1,100 entries on the Work Lane's scenarios) made every state's dump grow the
        # pickler's table fourfold and then clear it (session 19: ~270k instructions a state).
        # Assigned as a memo proxy, which the pickler copies table to table (a third of the time
        # of assigning a dict), to one pickler kept for the section's states.
        written = sorted(self.memo.values(), key=operator.itemgetter(0))
        kept = [x for _, x in written if type(x) not in _WRITTEN_AGAIN]
        template = _Encoder(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL)
        template.memo = {id(x): (k, x) for k, x in enumerate(kept)}
        self.memo_proxy = template.memo
        self.state_buffer = io.BytesIO()
        self.state_pickler = _state_pickler(self.state_buffer, seeds)
        # what the bytes read that can change without ``seeds.generation`` saying so: the
        # built-in mutable containers (by version, or by the identities of their items) and
        # the objects read inline (only stateless ones allow keeping the section)
        self.reusable = self.generation == seeds.generation and all(type(x) is object for x in p.inline)
        self.dicts: list[dict[Any, Any]] = []
        self.dict_views: list[ctypes.c_uint64] = []
        self.sequences: list[Any] = []
        self.bytearrays: list[bytearray] = []
        for _, x in self.memo.values():
            t = type(x)
            if t is dict:
                self.dicts.append(x)
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
            and same_versions(self.dicts, self.dict_views, self.versions)
            and _same_items(self.sequences, self.lengths, self.items)
            and list(map(bytes, self.bytearrays)) == self.contents
        )


def _same_items_in_python(sequences: list[Any], lengths: list[int], items: list[object]) -> bool:
    """Does each list or set of ``sequences`` still have its length in ``lengths`` and, one after
    another, the objects of ``items``?"""
    return list(map(len, sequences)) == lengths and all(
        map(operator.is_, itertools.chain.from_iterable(sequences), items)
    )


def _same_items_in_c(sequences: list[Any], lengths: list[int], items: list[object]) -> bool:
    """The same in one C loop (``_fingerprint_hot.c``)."""
    return bool(NATIVE.same_items(sequences, lengths, items))  # type: ignore[union-attr]


_same_items = _same_items_in_python if NATIVE is None else _same_items_in_c


def _state_pickler(buf: io.BytesIO, seeds: _Seeds) -> _Encoder:
    """The pickler of a search's states: its reducer in C where the C module is built (the
    Python one for the types it does not list, and for the objects that existed before the
    search, which the Python one may seed)."""
    p = _Encoder(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.seeds = seeds
    if NATIVE is not None:
        # (an instance attribute: the pickler looks ``reducer_override`` up at each dump)
        p.reducer_override = NATIVE.Reducer(_NATIVE_TABLE, seeds.pre, p.reducer_override, _K)  # type: ignore[method-assign]
    return p


def encode(x: object) -> bytes:
    """The digest of the object graph reachable from ``x`` (raises ``Opaque`` on hidden state),
    after the static section of the search's seeded objects."""
    seeds = _SEEDS[0]
    if seeds is None:
        buf = io.BytesIO()
        _Encoder(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(x)
        return hashlib.blake2b(buf.getbuffer(), digest_size=32).digest()
    seeds.refresh()
    section = seeds.section
    if section is None or not section.valid(seeds):
        section = seeds.section = _Section(seeds)
    buf, p = section.state_buffer, section.state_pickler
    buf.seek(0)
    buf.truncate()
    # one pickle in two parts: the section's memo goes on into the state's
    p.memo = section.memo_proxy
    p.dump(x)
    h = section.hashed.copy()
    with buf.getbuffer() as written:
        h.update(written)
    # The memo holds every object the state reached: kept until the next state's dump, an object
    # the program drops in the next step would die there, in the search's fingerprint, and its
    # finalizer run at the wrong place or never (review 13's F1 twins under ``states``).
    p.clear_memo()
    return h.digest()
