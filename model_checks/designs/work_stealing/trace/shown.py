"""How a work-stealing trace's tasks and queues read in the fast model's refusals and states: a
task as its JSON, clipped; a queue by its first ``SHOWN`` tasks and a count of the rest."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from model_checks.conformance.reader import clip

SHOWN = 8  # tasks shown of a queue in messages and states


def show(task: Any) -> str:
    return clip(json.dumps(task, ensure_ascii=False), 200)


def show_tasks(tasks: Iterable[Any], count: int) -> str:
    shown = []
    for n, x in enumerate(tasks):
        if n == SHOWN:
            break
        shown.append(show(x))
    more = f", … {count - SHOWN:,} more" if count > SHOWN else ""
    return "[" + ", ".join(shown) + more + "]"


def first(tasks: Iterable[Any], n: int = SHOWN) -> list[Any]:
    out: list[Any] = []
    for x in tasks:
        if len(out) == n:
            break
        out.append(x)
    return out
