"""A program's rebinding of a builtin (``builtins.print = capture``) as the race detector's write,
and its code's look-up of that name (``print(...)``) as a read of it.

An outside review (tenth, #4) proved "data-race free", even under ``--strategy dfs``, a thread
storing ``builtins.len`` while another called ``len``: the store was a write of the builtins
module's entry, but a name ``LOAD_GLOBAL`` finds in the builtins was no read (the C filter lets
through a global the module's dict holds only). Watching every builtin would cost a call of the
handler at each ``len``/``print``/``range``, so only the names the program (or a library on its
behalf: ``mock.patch("builtins.open")``, ``setattr(builtins, ...)``) rebound in the running check
are watched (``WATCHED``, the C filter's set); a look-up of one that the module's globals do not
hold reads ``builtins.<name>``. A look-up made before the first rebinding of its name in the check
was not recorded, so a new name watched has the search start again (``take_switched``).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from model_checks.harness.rt.native import NATIVE

if TYPE_CHECKING:
    from model_checks.harness.race_sites import Where

BUILTINS = builtins.__dict__
# the names rebound in the running check: the C filter's own set where it is built
WATCHED: set[str] = NATIVE.WATCHED_BUILTINS if NATIVE is not None else set()
_SWITCHED: list[str] = []


def label(fields: object, name: str) -> str:
    """The race report's words for the module attribute ``name`` of the dict ``fields``."""
    return f"builtins.{name}" if fields is BUILTINS else f"global {name}"


def rebound(name: str, where: Where) -> None:
    """``builtins.<name>`` written at ``where`` by a controlled thread."""
    if name not in WATCHED:
        WATCHED.add(name)
        _SWITCHED.append(f"builtins.{name} rebound at {at_line(where)}")


def at_line(where: Where) -> str:
    """``file:line`` of the instruction ``where`` runs (a search restart's note)."""
    code, line = where.f_code, where.f_code.co_firstlineno
    for start, end, at in code.co_lines():
        if start <= where.f_lasti < end and at is not None:
            line = at
    return f"{code.co_filename}:{line}"


def new_check() -> None:
    WATCHED.clear()
    _SWITCHED.clear()


def take_switched() -> str | None:
    """Where the last execution first rebound a builtin not watched before, or None."""
    taken, _SWITCHED[:] = _SWITCHED[:1], []
    return taken[0] if taken else None


__all__ = ["BUILTINS", "WATCHED", "at_line", "label", "new_check", "rebound", "take_switched"]
