"""A counterexample as a sequence diagram, drawn as inline SVG in Python.

Lifelines are derived from the steps alone: each step's process (the action's first parameter)
is a lifeline, and so is each further parameter value (a lane, a target worker ...), named by
its domain (``Lanes 0``); a parameter that names a process points at that process's lifeline.
Each step is a message from its process to its first parameter (to itself when it has none),
numbered and linked to ``#step-K`` of the step table beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from model_checks.explorer.counterexample import Counterexample, Step
from model_checks.report.html import esc
from model_checks.report.source import domain_name
from spec.language import Spec

MAX_LIFELINES = 12  # further parameters are written on the message instead
LANE_GAP = 150
TOP = 60
ROW = 34
CHAR = 6.6  # an estimate of one character's width at the diagram's font size


@dataclass(frozen=True)
class Message:
    number: int
    source: int  # lifeline index
    target: int
    label: str


def _fields(step: Step) -> str:
    if step.event is None:
        return ""
    inner = ", ".join(f"{k}={v}" for k, v in (step.fields or {}).items())
    return f" → {step.event}({inner})"


def _singular(name: str) -> str:
    low = name.lower()
    return low[:-1] if low.endswith("s") else low


def _field_target(step: Step, processes: set[str], entities: set[str]) -> str | None:
    """The lifeline an event's fields point at: a process named in a field, else a field named like
    one of the spec's parameter domains (``lane=0`` when some action ranges over ``Lanes``)."""
    fields = dict(step.fields or {})
    for value in fields.values():
        if isinstance(value, str) and value in processes and value != str(step.process):
            return value
    for key, value in fields.items():
        if _singular(key) in entities and not isinstance(value, bool):
            return f"{key} {value}"
    return None


def lifelines_and_messages(spec: Spec, cx: Counterexample) -> tuple[list[str], list[Message]]:
    by_name = {a.name: a for a in spec.actions}
    processes = {str(s.process) for s in cx.steps}
    entities = {_singular(domain_name(d)) for a in spec.actions for d in a.domains}
    lanes: list[str] = []

    def lane(label: str) -> int | None:
        if label in lanes:
            return lanes.index(label)
        if len(lanes) >= MAX_LIFELINES:
            return None
        lanes.append(label)
        return len(lanes) - 1

    for s in cx.steps:  # processes first, in order of first step, so they sit to the left
        lane(str(s.process))
    messages: list[Message] = []
    for s in cx.steps:
        source = lanes.index(str(s.process)) if str(s.process) in lanes else 0
        action = by_name.get(s.action)
        domains = action.domains[1:] if action is not None else ()
        target: int | None = None
        extra: list[str] = []
        for i, value in enumerate(s.args):
            shown = str(value)
            name = domain_name(domains[i]) if i < len(domains) else "arg"
            where = lane(shown if shown in processes else f"{name} {shown}") if target is None else None
            if where is not None:
                target = where
            else:
                extra.append(shown)
        if target is None:
            pointed = _field_target(s, processes, entities)
            target = lane(pointed) if pointed is not None else None
        args = f"({', '.join(extra)})" if extra else ""
        label = f"{s.number}. {s.action}{args}{_fields(s)}"
        messages.append(Message(s.number, source, source if target is None else target, label))
    return lanes, messages


def _x(index: int) -> int:
    return 80 + index * LANE_GAP


def _label_x(m: Message) -> int:
    return _x(m.source) + 34 if m.source == m.target else min(_x(m.source), _x(m.target)) + 6


def svg(spec: Spec, cx: Counterexample, ending: str) -> str:
    """The diagram; ``ending`` is written under the last step (what is violated, and how)."""
    lanes, messages = lifelines_and_messages(spec, cx)
    if not lanes:
        lanes = ["(no step)"]
    ends = [_label_x(m) + len(m.label) * CHAR for m in messages] + [len(ending) * CHAR * 1.1]
    width = int(max(_x(len(lanes) - 1) + 120, *ends) + 30)
    height = TOP + ROW * (len(messages) + 1) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="sequence diagram of the counterexample">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#22304a"/></marker></defs>',
    ]
    bottom = height - 20
    for i, name in enumerate(lanes):
        x = _x(i)
        box = max(60, int(len(name) * CHAR) + 16)
        parts.append(
            f'<g class="lifeline"><rect x="{x - box / 2}" y="10" width="{box}" height="26" rx="4" '
            f'fill="#22304a"/><text x="{x}" y="28" fill="#fff" font-size="12" '
            f'text-anchor="middle">{esc(name)}</text>'
            f'<line x1="{x}" y1="36" x2="{x}" y2="{bottom}" stroke="#99a" stroke-dasharray="4 3"/></g>'
        )
    loop = cx.loop_start
    for row, m in enumerate(messages):
        y = TOP + ROW * row + 14
        href = f"#step-{m.number}"
        x1, x2 = _x(m.source), _x(m.target)
        if loop is not None and row == loop:
            parts.append(
                f'<line x1="4" y1="{y - 20}" x2="{width - 4}" y2="{y - 20}" stroke="#b36b00" '
                'stroke-dasharray="6 3"/>'
                f'<text x="6" y="{y - 23}" font-size="11" fill="#b36b00">'
                "loop: from here the behaviour repeats</text>"
            )
        if x1 == x2:
            shape = (
                f'<path d="M{x1},{y} h28 v10 h-26" fill="none" stroke="#22304a" marker-end="url(#arrow)"/>'
            )
        else:
            shape = (
                f'<line x1="{x1}" y1="{y + 6}" x2="{x2}" y2="{y + 6}" stroke="#22304a" '
                'marker-end="url(#arrow)"/>'
            )
        parts.append(
            f'<a href="{esc(href)}"><g class="message" id="msg-{m.number}">{shape}'
            f'<text x="{_label_x(m)}" y="{y}" font-size="11.5" fill="#1d2330">{esc(m.label)}</text></g></a>'
        )
    y_end = TOP + ROW * len(messages) + 14
    parts.append(
        f'<text x="8" y="{y_end}" font-size="12" fill="#b3141b" font-weight="bold">{esc(ending)}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)
