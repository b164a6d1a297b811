"""The string hash seed this process runs under, as a verdict names it.

The order of a ``set`` or ``dict`` built from ``str`` or ``bytes`` keys follows their hashes,
which follow the seed CPython takes at start-up (``PYTHONHASHSEED``; unset, a random one). A
program whose lock order follows such a set deadlocks under some seeds and not under others
(session 40's review, p155), and the seed cannot change once the interpreter runs: a check
holds for the seed of its process. Every exhaustive verdict names it (``Options``'s
``Result.verdict_text``); ``lanecheck explore`` runs under a chosen seed (``--hash-seed``, 0 by
default) and checks several with ``--hash-seeds N`` (``commands/hash_seeds.py``).

The seed is read from ``PYTHONHASHSEED`` when this module is imported and confirmed against the
interpreter's secret (``_Py_HashSecret``: 24 bytes, zero for seed 0, else CPython's
``lcg_urandom`` of the seed), so an environment changed after start-up is not taken for it.
"""

from __future__ import annotations

import ctypes
import os
import sys

_SECRET_BYTES = 24  # sizeof(_Py_HashSecret_t)
MAX_SEED = 4_294_967_295  # what PYTHONHASHSEED accepts


def _expected_secret(seed: int) -> bytes:
    """The hash secret CPython derives from ``PYTHONHASHSEED=seed`` (Python/bootstrap_hash.c)."""
    if seed == 0:
        return bytes(_SECRET_BYTES)
    x = seed
    out = bytearray()
    for _ in range(_SECRET_BYTES):
        x = (x * 214013 + 2531011) & 0xFFFFFFFF
        out.append((x >> 16) & 0xFF)
    return bytes(out)


def _secret() -> bytes | None:
    """The interpreter's hash secret, where the symbol can be read (None otherwise)."""
    try:
        return bytes((ctypes.c_ubyte * _SECRET_BYTES).in_dll(ctypes.pythonapi, "_Py_HashSecret"))
    except (ValueError, AttributeError, OSError):
        return None


def _seed_at_start() -> int | None:
    """The ``PYTHONHASHSEED`` this interpreter started with, if it was a number (None: random)."""
    if not sys.flags.hash_randomization:
        return 0
    text = os.environ.get("PYTHONHASHSEED", "")
    if not text.isdigit() or int(text) > MAX_SEED:
        return None
    seed = int(text)
    secret = _secret()
    if secret is not None and secret != _expected_secret(seed):
        return None  # the variable was set after start-up: the seed is not that one
    return seed


SEED: int | None = _seed_at_start()


def describe() -> str:
    """The hash seed a verdict holds for, in words."""
    if SEED is not None:
        return f"str/bytes hash seed PYTHONHASHSEED={SEED}"
    return (
        "this process's random str/bytes hash seed (PYTHONHASHSEED unset: set orders may differ "
        "in another run; lanecheck explore fixes it)"
    )
