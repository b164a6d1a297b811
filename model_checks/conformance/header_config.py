"""What a design's trace header configures, declared once: the keys, their limits, the format.

A header's ``config`` counts the *units* its events name by an index field (actors, lanes,
mailboxes), further things an engine holds state for one by one (workers: ``MAX_INDEXED``),
and sizes an engine only compares (``MAX_SIZE``). From that one declaration come the limits the
reader enforces, the keys a port writes, the spec's constants for a streaming checker, and the
design's ``DesignFormat`` with its schema (``trace-schema.json`` beside the design's module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from model_checks.conformance.reader import MAX_INDEXED, MAX_SIZE

if TYPE_CHECKING:
    # the streamed format (and through it the spec language) is only needed by a design that
    # builds one: a fast validator's header check must not import the spec (`lanecheck validate`
    # with the fast engine starts without it)
    from model_checks.conformance.streamed import Checker, DesignFormat, FieldCheck

C = TypeVar("C")
Fields = Mapping[str, "tuple[tuple[str, FieldCheck], ...]"]
SCHEMA_FILE = "trace-schema.json"


@dataclass(frozen=True)
class HeaderConfig:
    """A design's header config; a key declared twice is a ``ValueError``."""

    index: str  # the event field naming a unit
    units: str  # the config key counting the units, which bounds ``index``
    indexed: tuple[str, ...] = ()  # counts of other things an engine holds state for (workers)
    sizes: tuple[str, ...] = ()  # sizes an engine only compares (capacities, budgets)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for key in self.keys:
            if key in seen:
                raise ValueError(f"header config key {key!r} is declared twice")
            seen.add(key)

    @property
    def keys(self) -> tuple[str, ...]:
        """The header config's keys, the units' count first."""
        return (self.units, *self.indexed, *self.sizes)

    @property
    def limits(self) -> dict[str, int]:
        """Each key's largest value (``reader.header_problem``)."""
        return {
            **dict.fromkeys((self.units, *self.indexed), MAX_INDEXED),
            **dict.fromkeys(self.sizes, MAX_SIZE),
        }

    def constants(self, make: Callable[..., C], config: Mapping[str, Any], **fixed: Any) -> C:
        """A streaming checker's spec constants: every key but the units' count from ``config``;
        no unit yet (units join as the trace names them, so a large header count costs nothing)."""
        counts = {key: int(config[key]) for key in (*self.indexed, *self.sizes)}
        return make(**{self.units: 0}, **counts, **fixed)

    def format(
        self,
        design: str,
        package: str | None,
        fields: Fields,
        *,
        make: Callable[[dict[str, Any]], Checker],
        rules: Mapping[int, str],
        completion: str,
        optional: Fields | None = None,
    ) -> DesignFormat:
        """The design's streamed format: its schema in ``package``'s folder, events bounded here."""
        from model_checks.conformance.streamed import DesignFormat

        return DesignFormat(
            design=design,
            schema_file=SCHEMA_FILE,
            schema_package=package or "",
            header_limits=self.limits,
            fields=fields,
            optional=optional or {},
            index=self.index,
            bound=self.units,
            make=make,
            rules=rules,
            completion=completion,
        )


__all__ = ["SCHEMA_FILE", "HeaderConfig"]
