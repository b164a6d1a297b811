"""Argument checks at the references' public boundary: strict types and documented limits.

Every public constructor, factory and method of the three references checks
what it is given here, before it allocates or starts anything, so a bad
argument is refused in one place with an error naming the field: ``TypeError``
for a wrong type, ``ValueError`` for a wrong value. The ToolKit-style
``create`` turns either into ``Result.INVALID_ARGUMENT``.

The types are strict because Python's coercions turn mistakes into silent
misbehaviour: ``True`` is an ``int`` (``workers=True`` would mean one worker),
``2.0`` and ``nan`` compare like numbers (``nan`` capacity means unbounded, a
float budget crashes a worker half-way), and any string is a "mode".

The limits bound what one argument may make a reference allocate or start up
front (a lock and a queue per lane or actor, a thread per worker): asking for
more is a clear ``ValueError`` instead of a hang or a ``MemoryError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, TypeVar

E = TypeVar("E", bound=Enum)

MAX_LANES = 1 << 16
"""Most lanes of a ``WorkerScheduler`` (and actors of a ``GateScheduler``): each has its lock and queue."""
MAX_WORKERS = 1 << 10
"""Most worker threads of any reference scheduler or dispatcher."""
MAX_SIZE = 1 << 30
"""Largest capacity, budget, permit count or throughput (the ToolKit's sizes are 32-bit)."""

_SHOW_LIMIT = 60


def show(value: object) -> str:
    """``repr(value)`` for an error message: shortened, and never raising (user objects, huge ints)."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__, or an int past the str-conversion limit
        return f"<{type(value).__name__} object>"
    return text if len(text) <= _SHOW_LIMIT else text[: _SHOW_LIMIT - 3] + "..."


def count(field: str, value: object, *, minimum: int = 1, maximum: int = MAX_SIZE) -> int:
    """An ``int`` (not ``bool``, not ``float``) in ``[minimum, maximum]``."""
    if type(value) is int:  # a plain int (most calls): none of the tests below can refuse it
        number = value
    else:
        if not isinstance(value, int) or isinstance(value, bool):  # a flag is never a count
            raise TypeError(f"{field} must be an int, got {type(value).__name__} {show(value)}")
        number = int.__int__(value)  # an int subclass's own comparisons are not trusted
    if number < minimum:
        raise ValueError(f"{field} must be at least {minimum}, got {show(number)}")
    if number > maximum:
        raise ValueError(f"{field} must be at most {maximum}, got {show(number)}")
    return number


def power_of_two(field: str, value: object, *, maximum: int = MAX_SIZE) -> int:
    """A power of two in ``[2, maximum]`` (the ToolKit's rule for queue sizes)."""
    number = count(field, value, minimum=2, maximum=maximum)
    if number & (number - 1):
        raise ValueError(f"{field} must be a power of two (2, 4, 8, ...), got {number}")
    return number


def next_power_of_two(number: int) -> int:
    """The smallest power of two that is at least ``max(2, number)``."""
    return max(2, 1 << (number - 1).bit_length())


def index(value: object, size: int) -> bool:
    """Is ``value`` an ``int`` (not ``bool``) in ``range(size)``?"""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def checked_index(field: str, value: object, size: int) -> int:
    """``value`` as an index into ``size`` elements; ``TypeError``/``ValueError`` naming ``field``."""
    return count(field, value, minimum=0, maximum=size - 1)


def sequence(field: str, value: object, *, maximum: int) -> list[Any]:
    """A sequence (not a string, not an iterator) of 1 to ``maximum`` elements, copied to a list."""
    items: Sequence[Any]
    if type(value) is list or type(value) is tuple:  # most calls: spared the ABC's isinstance
        items = value
    elif isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
        raise TypeError(f"{field} must be a sequence (a list or a tuple), got {type(value).__name__}")
    else:
        items = value
    try:
        length = len(items)
    except OverflowError:  # e.g. range(2**70): its length does not fit a C size
        raise ValueError(f"{field} may hold at most {maximum} elements, got more than 2**63") from None
    if length < 1:
        raise ValueError(f"{field} must hold at least one element, got none")
    if length > maximum:
        raise ValueError(f"{field} may hold at most {maximum} elements, got {length}")
    return list(value)


def function(field: str, value: object, *, optional: bool = False) -> Any:
    """A callable (or ``None`` when ``optional``)."""
    if value is None and optional:
        return None
    if not callable(value):
        raise TypeError(f"{field} must be callable, got {type(value).__name__} {show(value)}")
    return value


def member(field: str, value: object, kind: type[E]) -> E:
    """A member of the enum ``kind`` (its value, e.g. the string ``"drain"``, is not one)."""
    if not isinstance(value, kind):
        names = ", ".join(f"{kind.__name__}.{m.name}" for m in kind)
        raise TypeError(f"{field} must be one of {names}, got {type(value).__name__} {show(value)}")
    return value


def instance(field: str, value: object, kind: type[Any]) -> Any:
    """An instance of ``kind``."""
    if not isinstance(value, kind):
        raise TypeError(f"{field} must be a {kind.__name__}, got {type(value).__name__} {show(value)}")
    return value


def text(field: str, value: object, *, optional: bool = False) -> str | None:
    """A ``str`` (or ``None`` when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a str, got {type(value).__name__} {show(value)}")
    return value


def provides(field: str, value: object, methods: tuple[str, ...], *, optional: bool = True) -> Any:
    """An object with every method in ``methods`` (a runtime, a tracer), or ``None`` when ``optional``."""
    if value is None and optional:
        return None
    for name in methods:
        if not callable(getattr(value, name, None)):  # refused: the message names all it lacks
            missing = ", ".join(m for m in methods if not callable(getattr(value, m, None)))
            raise TypeError(
                f"{field} must provide {', '.join(methods)}; {type(value).__name__} lacks {missing}"
            )
    return value


RUNTIME_METHODS = ("lock", "condition", "atomic_int", "start_thread", "current_thread", "thread_name")
TRACER_METHODS = ("begin", "emit")


def runtime(value: object) -> Any:
    """``None`` (the default runtime) or an object with the runtime's methods."""
    return provides("runtime", value, RUNTIME_METHODS)


def tracer(value: object) -> Any:
    """``None`` (no tracing) or an object with ``begin`` and ``emit``."""
    return provides("tracer", value, TRACER_METHODS)


def refusal(check: Callable[[], object]) -> str | None:
    """Run a check; the message of the ``TypeError``/``ValueError`` it raised, or None if it passed."""
    try:
        check()
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None
