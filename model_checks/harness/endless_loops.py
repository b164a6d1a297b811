"""Is a thread in a loop it can never leave? The proof behind a local loop's "livelock" (session 46).

A long run of opcodes with no operation and no access (``busy_wait.BusyWait.long_run``) is, by
itself, no sign that a thread is stuck: review 13's A7 (p176) was two threads each summing
3,000,000 numbers, a correct program reported as a livelock after 16,777,216 opcodes. Such a run
now goes on (to its end, or to the time limit: a bounded verdict). It is a livelock only when
the thread is inside a loop it provably never leaves: the innermost function's loop from a
backward jump's target to the jump, every instruction of which is one of a few that run no code
of anyone's and raise nothing on the values it holds (locals and constants of exact type ``int``,
``float`` or ``bool``: ``+``, ``-``, ``&``, ``|``, ``^``, comparisons, truth tests), and every
jump of which lands inside it. ``while True: n += 1`` is one; ``while n < 10: n += 1`` (it
exits) and ``while True: n = n // k`` (``k`` may be 0) are not. Only an asynchronous exception
another thread sends (``PyThreadState_SetAsyncExc``) could end it, which a thread that never
gives way cannot receive here.
"""

from __future__ import annotations

import dis
import types
from typing import Final

# instructions that run no one's code and raise nothing on exact ints, floats and bools
_PLAIN: Final = frozenset(
    {
        "NOP",
        "LOAD_FAST",
        "STORE_FAST",
        "LOAD_CONST",
        "POP_TOP",
        "COPY",
        "SWAP",
        "COMPARE_OP",
        "UNARY_NOT",
        "UNARY_NEGATIVE",
        "BINARY_OP",
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
        "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_FORWARD_IF_FALSE",
        "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_FALSE",
        "POP_JUMP_FORWARD_IF_NONE",
        "POP_JUMP_FORWARD_IF_NOT_NONE",
        "POP_JUMP_BACKWARD_IF_NONE",
        "POP_JUMP_BACKWARD_IF_NOT_NONE",
        "EXTENDED_ARG",
    }
)
# ``*`` grows an int without bound (memory runs out), ``/``, ``//``, ``%`` divide by zero, shifts
# take negative counts, ``**`` may do any of these: left out
_ADDITIVE: Final = frozenset({"+", "-", "+=", "-="})
_BITWISE: Final = frozenset({"&", "|", "^", "&=", "|=", "^="})  # (ints and bools only)
_BACKWARD: Final = frozenset({"JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})


class _Loop:
    """A loop of plain instructions with no way out: its byte range, and what it reads."""

    __slots__ = ("bitwise", "consts", "end", "names", "start")

    def __init__(
        self, start: int, end: int, names: frozenset[str], consts: tuple[object, ...], bitwise: bool
    ) -> None:
        self.start, self.end = start, end
        self.names, self.consts, self.bitwise = names, consts, bitwise


_LOOPS: dict[types.CodeType, tuple[_Loop, ...]] = {}


def _closed(instructions: list[dis.Instruction], start: int, end: int) -> _Loop | None:
    body = [ins for ins in instructions if start <= ins.offset <= end]
    names: set[str] = set()
    consts: list[object] = []
    bitwise = False
    for ins in body:
        if ins.opname not in _PLAIN:
            return None
        if ins.opname == "BINARY_OP":
            if ins.argrepr in _BITWISE:
                bitwise = True
            elif ins.argrepr not in _ADDITIVE:
                return None
        if "JUMP" in ins.opname and not start <= int(ins.argval) <= end:
            return None  # a way out
        if ins.opname == "LOAD_FAST":
            names.add(str(ins.argval))
        elif ins.opname == "LOAD_CONST":
            consts.append(ins.argval)
    return _Loop(start, end, frozenset(names), tuple(consts), bitwise)


def _loops(code: types.CodeType) -> tuple[_Loop, ...]:
    found = _LOOPS.get(code)
    if found is None:
        instructions = list(dis.get_instructions(code))
        loops = (
            _closed(instructions, int(ins.argval), ins.offset)
            for ins in instructions
            if ins.opname in _BACKWARD
        )
        found = _LOOPS[code] = tuple(loop for loop in loops if loop is not None)
    return found


def _plain(value: object, bitwise: bool) -> bool:
    kind = type(value)
    return kind is int or kind is bool or (kind is float and not bitwise)


def endless(frame: types.FrameType) -> tuple[int, int] | None:
    """The first and last line of a loop ``frame`` is in and can never leave, or None."""
    at = frame.f_lasti
    for loop in _loops(frame.f_code):
        if not loop.start <= at <= loop.end:
            continue
        local = frame.f_locals
        if all(name in local and _plain(local[name], loop.bitwise) for name in loop.names) and all(
            _plain(const, loop.bitwise) for const in loop.consts
        ):
            lines = [
                line
                for start, end, line in frame.f_code.co_lines()
                if line is not None and loop.start <= start <= loop.end
            ]
            first = min(lines, default=frame.f_lineno)
            return first, max(lines, default=first)
    return None


__all__ = ["endless"]
