"""Benchmark figures written into a Markdown document, so no documented figure goes stale.

A document marks where each benchmark's figures go with a pair of comments::

    <!-- bench:NAME -->
    (replaced on every run)
    <!-- /bench:NAME -->

`lanecheck bench all --write FILE` reruns the benchmarks and replaces the text between each pair
with the figures of this run, headed by when and on what machine (load, cores, pinned) they were
measured. The prose around the blocks (what a figure means, what was tried) stays the author's.
"""

from __future__ import annotations

import json
import platform
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from model_checks.bench.machine import context

# A marker is a line of its own, so prose may quote one.
_BLOCK = re.compile(
    r"^<!-- bench:(?P<name>[\w.-]+) -->\n(?P<body>.*?)^<!-- /bench:(?P=name) -->$", re.DOTALL | re.MULTILINE
)
_OPEN = re.compile(r"^<!-- bench:(?P<name>[\w.-]+) -->$")
_CLOSE = re.compile(r"^<!-- /bench:(?P<name>[\w.-]+) -->$")

# Nested figures are flattened to dotted keys down to this depth; deeper values are shown as JSON.
_DEPTH = 3
# A value wider than this is cut (a long list of samples says nothing in a table).
_WIDTH = 160


class DocumentError(ValueError):
    """The document's bench blocks are not well formed (the message names the block and the line)."""


@dataclass(frozen=True)
class Measured:
    """One benchmark's figures and the machine they were measured on."""

    name: str
    figures: Mapping[str, Any]
    machine: Mapping[str, Any]
    at: str  # UTC, ISO 8601, to the second

    @staticmethod
    def now(name: str, figures: Mapping[str, Any], machine: Mapping[str, Any] | None = None) -> Measured:
        return Measured(
            name,
            figures,
            dict(context() if machine is None else machine),
            datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )


def block_names(text: str) -> list[str]:
    """The benchmark names the document has blocks for, in order; ``DocumentError`` when a block is
    opened and not closed (or closed and not opened, or opened twice)."""
    opened: dict[str, int] = {}
    names: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if found := _OPEN.match(line):
            name = found["name"]
            if name in opened or name in names:
                raise DocumentError(f"line {number}: a second block bench:{name}")
            opened[name] = number
        if found := _CLOSE.match(line):
            name = found["name"]
            if name not in opened:
                raise DocumentError(f"line {number}: /bench:{name} closes no open block")
            del opened[name]
            names.append(name)
    if opened:
        name, number = next(iter(opened.items()))
        raise DocumentError(f"line {number}: block bench:{name} is never closed (<!-- /bench:{name} -->)")
    return names


def _flat(figures: Mapping[str, Any], prefix: str = "", depth: int = 1) -> Iterator[tuple[str, Any]]:
    for key, value in figures.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and depth < _DEPTH:
            yield from _flat(value, path + ".", depth + 1)
        else:
            yield path, value


def _cell(value: Any) -> str:
    if isinstance(value, float):
        text = f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, default=str)
    if len(text) > _WIDTH:
        text = text[: _WIDTH - 1] + "…"
    return text.replace("|", "\\|").replace("\n", " ")


def _machine_line(m: Measured) -> str:
    load = m.machine.get("load")
    load_text = " / ".join(f"{x:g}" for x in load) if load else "unknown"
    pinned = "pinned" if m.machine.get("pinned") else "not pinned"
    cores = m.machine.get("usable_cores", m.machine.get("cores", "?"))
    loop = m.machine.get("reference_loop_ms")
    speed = f", reference loop {loop:g} ms" if isinstance(loop, (int, float)) else ""
    return (
        f"`lanecheck bench {m.name} --json`, {m.at}: load {load_text} (1/5/15 min), "
        f"{cores} of {m.machine.get('cores', '?')} cores, {pinned}{speed}, "
        f"Python {platform.python_version()} on {platform.machine()}."
    )


def render(m: Measured) -> str:
    """The Markdown of one block: where and when, then every figure as a row."""
    rows = [_machine_line(m), "", "| figure | value |", "|---|---|"]
    rows += [f"| {_cell(key)} | {_cell(value)} |" for key, value in _flat(m.figures)]
    return "\n".join(rows) + "\n"


def update(text: str, measured: Mapping[str, Measured]) -> str:
    """``text`` with the block of every measured benchmark replaced; blocks of benchmarks not in
    ``measured`` are left as they were. ``DocumentError`` when a measured benchmark has no block
    (its figures would be lost from the document silently)."""
    names = block_names(text)
    missing = [name for name in measured if name not in names]
    if missing:
        raise DocumentError(
            "no block for " + ", ".join(f"bench:{n}" for n in missing) + ": add `<!-- bench:NAME -->` and "
            "`<!-- /bench:NAME -->` lines where its figures belong"
        )

    def replace(found: re.Match[str]) -> str:
        name = found["name"]
        if name not in measured:
            return found[0]
        return f"<!-- bench:{name} -->\n{render(measured[name])}<!-- /bench:{name} -->"

    return _BLOCK.sub(replace, text)


__all__ = ["DocumentError", "Measured", "block_names", "render", "update"]
