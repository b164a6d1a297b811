"""Result codes of the ToolKit, kept with their original names and values.

Expected refusals (a full lane, a stopped scheduler, a bad handle) are results,
not exceptions, so a port in a language without exceptions can mirror the
contract one to one.
"""

from __future__ import annotations

from enum import IntEnum


class Result(IntEnum):
    SUCCESS = 0
    UNKNOWN = -1
    INVALID_ARGUMENT = -2
    BUFFER_TOO_SMALL = -3
    OUT_OF_MEMORY = -4
    INVALID_DATA = -5
    IO = -6
    INVALID_STATE = -7
    CAPACITY_EXCEEDED = -8
    REJECTED = -9


# Enum attribute lookups are slow in CPython 3.11: the schedulers' post paths compare and return
# these names.
SUCCESS = Result.SUCCESS
INVALID_STATE = Result.INVALID_STATE
CAPACITY_EXCEEDED = Result.CAPACITY_EXCEEDED
