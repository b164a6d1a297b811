"""How a data race is told: the location's words (``closure variable n``, ``dict['b']``,
``Counter.value``), the verb with the call that made the access (``write (list.append())``), both
sites' files, lines and source, and the failure of kind ``data_race`` the detector reports."""

from __future__ import annotations

import gc
import linecache
import os
import types
from typing import TYPE_CHECKING

from model_checks.harness.own_lines import reading_lines
from model_checks.harness.race_files import FileLocation
from model_checks.harness.race_items import subscripted
from model_checks.harness.race_shadow import Gone
from model_checks.harness.race_sites import ALL, CONTAINERS, Site
from model_checks.harness.rt.ending import ExecFailure
from model_checks.harness.thread_idents import given

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution


def race_failure(ex: Execution, first: Site, second: Site) -> ExecFailure:
    """The failure of an execution whose accesses ``first`` and ``second`` race."""
    what = both_of(first, second)
    a, b = ex.thread_label(first[0]), ex.thread_label(second[0])
    if a == b:  # two threads the program gave one name: say which
        a, b = f"{a} (thread #{first[0]})", f"{b} (thread #{second[0]})"
    msg = (
        f"data race on {what}: {verb(first)} by {a} at {where(first, short=True)} and "
        f"{verb(second)} by {b} at {where(second, short=True)} are not ordered by any synchronisation"
        f"{_one_ident(ex, first, second, a, b)}"
    )
    details = "\n".join(
        [
            f"{verb(first)} of {what_of(first)} by thread {a}",
            f"  {where(first)}",
            f"    {line_of(first)}",
            f"{verb(second)} of {what_of(second)} by thread {b} (not after the first: no lock, "
            "condition, queue, event, join or atomic orders them)",
            f"  {where(second)}",
            f"    {line_of(second)}",
            "the exploration interleaves only synchronisation points, so it cannot show both orders:",
            "protect the data with a lock, or, for a deliberate GIL-atomic access, declare it",
            "(model_checks.harness.declare_atomic(cls, attribute): it then becomes a scheduling point)",
            *_held_in_a_field(first),
        ]
    )
    return ExecFailure("data_race", msg, details)


def _one_ident(ex: Execution, first: Site, second: Site, a: str, b: str) -> str:
    """Why two threads touched one key they meant to keep apart: it is the ``get_ident()`` both
    had, the second given the first's when the first ended (review 14's p98: a buffer per thread
    keyed by its ident; the report named the key and not that it was one ident twice)."""
    key = first[3][1]
    if type(key) is not int or key != second[3][1] or first[0] == second[0]:
        return ""
    idents = given(ex)
    if idents.get(first[0]) != key or idents.get(second[0]) != key:
        return ""
    return (
        f" ({key} is threading.get_ident() of both: {b} was started after {a} ended and was given "
        "its ident, as CPython gives a finished thread's ident to the next thread started)"
    )


def describe(obj: object, key: object) -> str:
    if type(obj) is Gone:  # an object held weakly (``race_shadow``): its type is what names it
        gone: type = obj.kind
        if issubclass(gone, CONTAINERS) or subscripted(gone):
            return f"{gone.__name__} (whole)" if key is ALL else f"{gone.__name__}[{key!r}]"
        return f"{gone.__name__}.{key}"
    if isinstance(obj, types.CellType):
        return f"closure variable {key}"
    if isinstance(obj, FileLocation):
        return str(obj)
    if type(obj) is dict:
        owner = fields_owner(obj)
        if owner is not None:  # an object's ``__dict__``: its attribute, or its fields whole
            name = type(owner).__name__
            return f"{name}'s fields (whole)" if key is ALL else f"{name}.{key}"
    if isinstance(obj, CONTAINERS) or subscripted(type(obj)):
        kind = type(obj).__name__
        return f"{kind} (whole)" if key is ALL else f"{kind}[{key!r}]"
    owner = obj.__name__ if isinstance(obj, type) else type(obj).__name__
    return f"{owner}.{key}"


def fields_owner(fields: object) -> object | None:
    """The object whose ``__dict__`` is ``fields``, if any (asked only for a report or a racy
    site: ``gc.get_referrers`` walks every object)."""
    for ref in gc.get_referrers(fields):
        if not isinstance(ref, type) and getattr(ref, "__dict__", None) is fields:
            owner: object = ref
            return owner
    return None


def what_of(site: Site) -> str:
    """The location: a label that names it (``global x``, a generator), else the object and key;
    a call's label (``list.append()``) says how it was touched, not what (``verb``)."""
    obj, key, label = site[3]
    return label if label and not label.endswith(")") else describe(obj, key)


def verb(site: Site) -> str:
    """``read`` or ``write``, with the call that made it (``write (list.append())``)."""
    label = site[3][2]
    done = "write" if site[4] else "read"
    return f"{done} ({label})" if label.endswith(")") else done


def both_of(first: Site, second: Site) -> str:
    """The location(s) of a race: one, or the two that overlap (a key and its whole container)."""
    a, b = what_of(first), what_of(second)
    return b if a == b else f"{b} and {a}"


def lineno(site: Site) -> int:
    code, offset = site[1], site[2]
    line = code.co_firstlineno
    for start, end, lineno in code.co_lines():
        if start <= offset < end and lineno is not None:
            return lineno
    return line


def where(site: Site, short: bool = False) -> str:
    file = site[1].co_filename
    return f"{os.path.basename(file) if short else file}:{lineno(site)}"


def line_of(site: Site) -> str:
    with reading_lines():  # (within the racing step: not the program's change of linecache)
        return linecache.getline(site[1].co_filename, lineno(site)).strip()


def _held_in_a_field(site: Site) -> list[str]:
    """How to declare a container's GIL-atomic calls (review 9's s20: two threads' ``heapreplace``
    and ``heappushpop`` on one list, each atomic in CPython): only a field can be declared, so the
    container is kept in one, and every access through the declared field is then one scheduling
    point, its container's accesses in that step unchecked."""
    obj = site[3][0]
    if not isinstance(obj, CONTAINERS) or fields_owner(obj) is not None:
        return []
    return [
        f"(a {type(obj).__name__} is no field: for GIL-atomic calls on it, such as heapq's, keep it in an "
        "object's field, obj.heap, and declare that field)"
    ]
