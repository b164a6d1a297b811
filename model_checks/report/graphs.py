"""State graphs of each component (``Design.projections``), laid out by Graphviz ``dot`` as SVG.

One breadth-first pass over the reachable states projects every transition onto every component
at once. Without ``dot`` on the PATH the page says so and lists the projected transitions instead.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import deque
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from model_checks.design import Projection
from spec.language import Instance, Spec

MAX_STATES = 200_000  # beyond this the graph is drawn from the states reached so far, and says so
DOT_SECONDS = 60.0
DOT_MISSING = "Graphviz `dot` is not installed: state graphs are not drawn (apt-get install graphviz)"

Edge = tuple[str, str, str]  # (from, action, to), as shown


@dataclass
class Projected:
    name: str
    initial: str
    edges: set[Edge] = field(default_factory=set)
    error: str | None = None  # the projection raised on some state


@dataclass
class Walk:
    components: list[Projected]
    states: int
    complete: bool


def project_all(spec: Spec, constants: Any, projections: Mapping[str, Projection]) -> Walk:
    inst = Instance(spec, constants)
    starts = inst.initial_states()
    found = {name: Projected(name, "") for name in projections}

    def view(name: str, state: Any) -> str | None:
        item = found[name]
        if item.error is not None:
            return None
        try:
            return str(projections[name](constants, state))
        except Exception as problem:  # a projection's bug is shown on its graph, not fatal to the site
            item.error = f"{type(problem).__name__}: {problem}"
            return None

    for name, item in found.items():
        item.initial = view(name, starts[0]) or ""
    seen: set[Hashable] = set(starts)
    queue = deque(starts)
    complete = True
    while queue:
        state = queue.popleft()
        before = {name: view(name, state) for name in found}
        for t in inst.successors(state):
            for name, item in found.items():
                was = before[name]
                now = view(name, t.state)
                if was is not None and now is not None and was != now:
                    item.edges.add((was, t.action.name, now))
            if t.state not in seen:
                if len(seen) >= MAX_STATES:
                    complete = False
                    continue
                seen.add(t.state)
                queue.append(t.state)
    return Walk(list(found.values()), len(seen), complete)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(item: Projected, title: str) -> str:
    labels: dict[tuple[str, str], list[str]] = {}
    for a, action, b in sorted(item.edges):
        labels.setdefault((a, b), []).append(action)
    lines = [
        "digraph G {",
        f"  label={_quote(title)}; labelloc=t; rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3ff", fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
        '  __start [shape=point, width=0.12, label=""];',
        f"  __start -> {_quote(item.initial)};",
    ]
    for (a, b), actions in sorted(labels.items()):
        lines.append(f"  {_quote(a)} -> {_quote(b)} [label={_quote(' / '.join(actions))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_available() -> bool:
    return shutil.which("dot") is not None


def render_svg(dot_text: str) -> str:
    """The SVG element ``dot`` draws (its XML prologue dropped, so it can sit inside a page)."""
    exe = shutil.which("dot")
    if exe is None:
        raise FileNotFoundError(DOT_MISSING)
    done = subprocess.run(
        [exe, "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=DOT_SECONDS, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.strip()[:300]}")
    start = done.stdout.find("<svg")
    if start < 0:
        raise RuntimeError("dot wrote no <svg> element")
    # dot's own comments carry the graph's name; they are noise inside a page
    return re.sub(r"<!--.*?-->", "", done.stdout[start:], flags=re.S)
