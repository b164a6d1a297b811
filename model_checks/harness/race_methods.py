"""A class's method rebound (``mock.patch.object(Svc, "fetch", ...)``, ``Svc.fetch = fake``, an
instance's field shadowing it) as the race detector's write, and the method's look-ups
(``Svc().fetch()``, ``Svc.fetch``) as reads of it.

A method found in its class as code is no read (calling a method is no access of data, and
recording one would cost every method call of every program a call of the handler). An outside
review (eleventh, #10) had ``patch.object`` on a class entered in one thread while another called
the method on its own instance proved "exhaustive" by the default search: the patch's writes were
seen, but the other thread's call, made before or after the patch when ``fetch`` was code, read
nothing, so DPOR never reordered them (``--strategy dfs`` found a call made inside the patch, when
the class held a mock, data). So a class attribute written by a controlled thread where the value
replaced or stored is a method is watched for the rest of the check (``rebinding``): its look-ups through
the class or any object of it are reads of each class on the way to the one that holds it
(``path``), as a data attribute's are; a call once a step and site, as a read of code is (each
call recorded, two threads' 30000 calls cut the steps up and ran past the time limit). The C
filter lets those names through (``WATCHED``, its own set: a check that rebinds no method pays one
size test at a method's look-up). A look-up made
before the first rebinding was not recorded, so a newly watched method has the search start again
(``take_switched``), as a builtin's rebinding does (``race_builtins``).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from model_checks.harness.race_builtins import at_line
from model_checks.harness.race_library import TRACED_FILES
from model_checks.harness.race_sites import CODE_TYPES
from model_checks.harness.rt.native import NATIVE

if TYPE_CHECKING:
    from model_checks.harness.race_sites import Where

# the names of the methods rebound in the running check: the C filter's own set where it is built
WATCHED: set[str] = NATIVE.WATCHED_METHODS if NATIVE is not None else set()
# (module, qualified name, name) of each class's method rebound in the running check: by name, as a
# class made by the explored function is another object in each execution
_CLASSES: set[tuple[str, str, str]] = set()
_SWITCHED: list[str] = []
_MISSING = object()
# a method's kinds: what a look-up through an object or its class calls (not a data descriptor,
# which a field's store goes through: a slot, a getset such as a function's ``__name__``, a property)
METHODS = tuple(
    kind
    for kind in CODE_TYPES
    if kind not in (types.ModuleType, type, types.MemberDescriptorType, types.GetSetDescriptorType, property)
)


def _key(cls: type, name: str) -> tuple[str, str, str]:
    return (str(cls.__dict__.get("__module__", "")), cls.__qualname__, name)


def rebinding(cls: type, name: str, where: Where, replaced: object, stored: object) -> None:
    """``cls.name`` (or an object of ``cls``'s field ``name``) written at ``where``, replacing
    ``replaced`` (what a look-up found) with ``stored``: a method rebound where either is one, by
    the program (a library's own class making, ``namedtuple``'s or ``dataclass``'s, is none)."""
    # (the types first: ``f_code`` is an audit event, which the process watch's hook makes cost)
    if not (issubclass(type(replaced), METHODS) or issubclass(type(stored), METHODS)):
        return
    if where.f_code.co_filename in TRACED_FILES:
        return
    key = _key(cls, name)
    if key not in _CLASSES:
        _CLASSES.add(key)
        WATCHED.add(name)
        _SWITCHED.append(f"{cls.__qualname__}.{name} rebound at {at_line(where)}")


def path(cls: type, name: str) -> list[type] | None:
    """The classes of ``cls``'s method resolution order a look-up of ``cls.name`` reads (up to the
    one that holds it) where one of them, or the object's own field, had ``name`` rebound; else
    None."""
    if name not in WATCHED:
        return None
    found: list[type] = []
    watched = False
    for klass in cls.__mro__:
        found.append(klass)
        watched = watched or _key(klass, name) in _CLASSES
        if klass.__dict__.get(name, _MISSING) is not _MISSING:
            break
    return found if watched else None


def new_check() -> None:
    WATCHED.clear()
    _CLASSES.clear()
    _SWITCHED.clear()


def take_switched() -> str | None:
    """Where the last execution first rebound a method not watched before, or None."""
    taken, _SWITCHED[:] = _SWITCHED[:1], []
    return taken[0] if taken else None


__all__ = ["METHODS", "WATCHED", "new_check", "path", "rebinding", "take_switched"]
