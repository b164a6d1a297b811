"""Traces made from a valid one by small changes: a prefix, an event dropped, neighbours swapped,
a field's value changed, a seq gap. Most are rejected, each somewhere else: a corpus on which two
engines, or two namings of one trace, must say the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def renumbered(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps({**e, "seq": n}) for n, e in enumerate(events, start=1)]


def perturbed(name: str, lines: list[str], out: Path) -> list[Path]:
    """The traces made from ``lines`` (a header and its events), written to ``out`` as ``name-*``."""
    header, events = lines[0], [json.loads(line) for line in lines[1:]]
    n = len(events)
    made = [write_lines(out / f"{name}-prefix.jsonl", lines[: 1 + n // 2])]
    for at in (n // 5, n // 2, 4 * n // 5):
        dropped = events[:at] + events[at + 1 :]
        made.append(write_lines(out / f"{name}-drop{at}.jsonl", [header, *renumbered(dropped)]))
        swapped = [*events[:at], events[at + 1], events[at], *events[at + 2 :]]
        made.append(write_lines(out / f"{name}-swap{at}.jsonl", [header, *renumbered(swapped)]))
        changed = [dict(e) for e in events]
        for key, value in changed[at].items():
            if key in ("seq", "thread", "event"):
                continue
            if type(value) is bool:
                changed[at][key] = not value
            elif type(value) is int:
                changed[at][key] = value + 1
            elif type(value) is str:
                changed[at][key] = value + "x"
            break
        made.append(write_lines(out / f"{name}-field{at}.jsonl", [header, *renumbered(changed)]))
    gap = [header, *lines[1 : n // 3], json.dumps({**events[n // 3], "seq": n // 3 + 5})]
    made.append(write_lines(out / f"{name}-gap.jsonl", gap))
    return made
