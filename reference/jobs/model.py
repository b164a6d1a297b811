"""What a job is: the request a caller enqueues (``JobSpec``) and the row a store keeps (``Job``).

Every field of a ``JobSpec`` is checked when it is built, so a store never holds a job it cannot
schedule: a bad field is a ``TypeError``/``ValueError`` naming it, and the caller keeps the job.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reference import arguments

MAX_NAME = 200
"""Longest queue, handler or concurrency-group name (they are index keys and trace fields)."""
MAX_PAYLOAD_BYTES = 1 << 20
"""Largest payload, as compact JSON: a queue row is no place for bulk data."""
MAX_ATTEMPTS = 1000
MAX_PRIORITY = 1_000_000
MAX_COST = 1 << 30
MAX_DELAY = 366 * 24 * 3600.0
MAX_BACKOFF = 24 * 3600.0
"""Longest wait between two attempts, whatever the exponent says."""


class JobState(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"
    DISCARDED = "discarded"
    """Dropped on purpose and reported: a pending step of a workflow that failed."""


TERMINAL = frozenset({JobState.DONE, JobState.FAILED, JobState.DISCARDED})


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls, DEL, and the bidi marks and overrides (which make a name print as another)."""


def name(fieldname: str, value: object, *, optional: bool = False) -> str | None:
    """A non-empty name of at most ``MAX_NAME`` characters, without control characters."""
    checked = arguments.text(fieldname, value, optional=optional)
    if checked is None:
        return None
    if not checked or len(checked) > MAX_NAME:
        raise ValueError(f"{fieldname} must have 1 to {MAX_NAME} characters, got {len(checked)}")
    if _CONTROL.search(checked):
        raise ValueError(f"{fieldname} must not contain control characters, got {arguments.show(checked)}")
    return checked


def seconds(fieldname: str, value: object, *, maximum: float) -> float:
    """A finite number of seconds in ``[0, maximum]`` (an ``int`` or a ``float``, never a ``bool``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{fieldname} must be a number of seconds, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > maximum:
        raise ValueError(
            f"{fieldname} must be between 0 and {maximum:g} seconds, got {arguments.show(value)}"
        )
    return number


def encode_payload(payload: object, fieldname: str = "payload") -> str:
    """``payload`` as compact JSON; refuses what JSON cannot hold exactly (NaN, sets, huge)."""
    try:
        text = json.dumps(payload, separators=(",", ":"), allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as problem:
        raise ValueError(f"{fieldname} must be JSON (objects, lists, strings, numbers): {problem}") from None
    except RecursionError:
        raise ValueError(f"{fieldname} is nested too deeply") from None
    if len(text.encode()) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"{fieldname} is {len(text.encode())} bytes of JSON; at most {MAX_PAYLOAD_BYTES}")
    return text


@dataclass(frozen=True)
class JobSpec:
    """A job to enqueue. ``handler`` defaults to the queue's name; higher ``priority`` runs first.

    ``backoff`` is the wait before the second attempt; it doubles per failed attempt, up to
    ``MAX_BACKOFF``. ``concurrency_limit`` caps the running jobs of ``concurrency_group`` (so it
    needs a group); ``cost_units`` is the job's weight in queue and group budgets.
    """

    queue: str
    payload: Any = None
    handler: str | None = None
    priority: int = 0
    delay: float = 0.0
    max_attempts: int = 3
    backoff: float = 1.0
    concurrency_group: str | None = None
    concurrency_limit: int | None = None
    cost_units: int = 1
    payload_json: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name("queue", self.queue)
        name("handler", self.handler, optional=True)
        arguments.count("priority", self.priority, minimum=-MAX_PRIORITY, maximum=MAX_PRIORITY)
        seconds("delay", self.delay, maximum=MAX_DELAY)
        arguments.count("max_attempts", self.max_attempts, maximum=MAX_ATTEMPTS)
        seconds("backoff", self.backoff, maximum=MAX_BACKOFF)
        name("concurrency_group", self.concurrency_group, optional=True)
        if self.concurrency_limit is not None:
            arguments.count("concurrency_limit", self.concurrency_limit, maximum=MAX_COST)
            if self.concurrency_group is None:
                raise ValueError("concurrency_limit needs a concurrency_group to count the running jobs of")
        arguments.count("cost_units", self.cost_units, minimum=0, maximum=MAX_COST)
        object.__setattr__(self, "payload_json", encode_payload(self.payload))

    @property
    def handler_name(self) -> str:
        return self.handler if self.handler is not None else self.queue


def storable_text(text: str) -> str:
    """``text`` as every store can hold it: lone surrogates (from ``surrogateescape``d file names,
    subprocess output) backslash-escaped, NUL (which PostgreSQL's text refuses) as ``\\x00``."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return safe.replace("\x00", "\\x00")


def describe_error(problem: BaseException) -> str:
    """``Type: message`` of a handler's exception, storable; the type alone (and why) when the
    exception's own ``str()`` raises: a broken message must not take the worker down with it."""
    kind = type(problem).__name__
    try:
        message = str(problem)
    except Exception as broken:
        message = f"<str() of the exception raised {type(broken).__name__}>"
    return storable_text(f"{kind}: {message}")


def retry_delay(backoff: float, attempts: int) -> float:
    """The wait after the ``attempts``-th failed attempt: ``backoff * 2**(attempts-1)``, capped."""
    if backoff == 0:
        return 0.0
    exponent = min(max(attempts - 1, 0), 40)  # 2**40 s is past the cap already
    return min(backoff * (2.0**exponent), MAX_BACKOFF)


@dataclass(frozen=True)
class Job:
    """One job as a store holds it. ``attempts`` counts starts; a denial never spends one."""

    id: int
    queue: str
    handler: str
    payload: Any
    priority: int
    state: JobState
    attempts: int
    max_attempts: int
    backoff: float
    concurrency_group: str | None
    concurrency_limit: int | None
    cost_units: int
    available_at: float
    created_at: float
    lease_until: float | None = None
    lease_token: str | None = None
    worker: str | None = None
    denials: int = 0
    last_denial: str | None = None
    reason: str | None = None
    """Why the job failed or was discarded, or the last handler error of a job still retrying."""
    result: Any = None
    workflow_id: int | None = None
    step: int | None = None
    item_index: int | None = None

    def as_json(self) -> dict[str, Any]:
        doc = {k: getattr(self, k) for k in self.__dataclass_fields__}
        doc["state"] = self.state.value
        return doc
