"""A state's owner among the Ray workers, from a hash that every process computes alike.

The forked processes of ``parallel.py`` share one interpreter's string-hash seed, so Python's
``hash`` decides ownership there. Ray workers are separate interpreters, on separate machines:
their string hashes are salted differently, and in Python 3.11 ``hash(None)`` is an address.
So the owner is taken from a digest (BLAKE2b) of a canonical byte encoding of the owner fields
(``ownership.py`` picks them); Python's ``hash`` is still used, but only inside one process: for
its own seen-set and to remember the owner of owner-field values it has met before (few, since
those fields rarely change).
"""

from __future__ import annotations

import dataclasses
import enum
import struct
from collections.abc import Callable
from hashlib import blake2b
from operator import itemgetter
from typing import Any

from spec.language import Function, Seq

MEMO_LIMIT = 1 << 20  # owner-field values remembered per process; beyond it, digested each time


def digest(value: Any) -> int:
    """A 64-bit hash of ``value``, the same in every process and on every machine.

    ``TypeError`` names a value it cannot encode canonically (an object hashed by identity).
    """
    out: list[bytes] = []
    _encode(value, out)
    return int.from_bytes(blake2b(b"".join(out), digest_size=8).digest(), "little")


def _encode(value: Any, out: list[bytes]) -> None:
    # Equal values must give equal bytes, across types too: ``True == 1 == 1.0`` and a
    # ``NamedTuple`` equals the plain tuple of its fields. Unequal values are tagged by kind.
    if value is None:
        out.append(b"N")
    elif isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        # bool and IntEnum too: they equal their int, as 2.0 does
        text = str(int(value)).encode()
        out.append(b"i" + struct.pack("<I", len(text)) + text)
    elif isinstance(value, str):  # StrEnum too
        text = str.__str__(value).encode("utf-8", "surrogatepass")
        out.append(b"s" + struct.pack("<I", len(text)) + text)
    elif isinstance(value, float):
        out.append(b"d" + struct.pack("<d", value))
    elif isinstance(value, enum.Enum):
        _encode((type(value).__qualname__, value.name), out)
    elif isinstance(value, bytes):
        out.append(b"b" + struct.pack("<I", len(value)) + value)
    elif isinstance(value, tuple):
        out.append(b"(" + struct.pack("<I", len(value)))
        for item in value:
            _encode(item, out)
    elif isinstance(value, Seq):  # equal sequences hold equal elements, and never equal a tuple
        out.append(b"<" + struct.pack("<I", len(value)))
        for item in value:
            _encode(item, out)
    elif isinstance(value, Function):
        out.append(b"f")
        _encode(value.domain(), out)
        _encode(value.values(), out)
    elif isinstance(value, frozenset | set):
        _sorted(b"{", value, out)
    elif isinstance(value, dict):
        _sorted(b"m", value.items(), out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        out.append(b"c")
        names = [f.name for f in dataclasses.fields(value) if f.compare]
        _encode((type(value).__qualname__, tuple(getattr(value, n) for n in names)), out)
    else:
        raise TypeError(
            f"the ray engine cannot fingerprint a {type(value).__qualname__} in a state: it has no canonical"
            " encoding (use ints, strings, tuples, Functions, Seqs, sets, enums, dataclasses or None)"
        )


def _sorted(tag: bytes, items: Any, out: list[bytes]) -> None:
    # Set order follows the salted hash: sort the members' encodings instead.
    encoded = []
    for item in items:
        part: list[bytes] = []
        _encode(item, part)
        encoded.append(b"".join(part))
    encoded.sort()
    out.append(tag + struct.pack("<I", len(encoded)))
    out.extend(encoded)


class Owner:
    """``owner(state)``: the worker, in ``range(size)``, that owns ``state``.

    ``fields``: the state's fields that decide (``None``: the whole state). The partition reads
    ``hash(owner(state)) % size``, which is the owner itself (a small int hashes to itself).
    """

    def __init__(self, fields: tuple[int, ...] | None, size: int) -> None:
        self.size = size
        self.project: Callable[[Any], Any] | None = itemgetter(*fields) if fields else None
        self.memo: dict[Any, int] = {}

    def __call__(self, state: Any) -> int:
        if self.project is None:
            return digest(state) % self.size
        value = self.project(state)
        owner = self.memo.get(value)
        if owner is None:
            owner = digest(value) % self.size
            if len(self.memo) < MEMO_LIMIT:
                self.memo[value] = owner
        return owner
