"""One page per spec mutant: the bug (the actions it changes), the counterexample as a sequence
diagram beside the step table with each step's state diff (``#step-K``), and the replay string
of the same bug in the reference where the design has one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model_checks.explorer.counterexample import Counterexample
from model_checks.report import sequence
from model_checks.report.counterexamples import MutantRun
from model_checks.report.html import code_block, details, esc, note, table
from model_checks.report.replay import Replay
from model_checks.report.source import source_of
from model_checks.report.spec_view import constants_text
from spec.language import Instance, Spec


def changed_actions(base: Spec, mutant: Spec) -> str:
    """The design's actions the mutant replaces or drops, and its own actions with their source."""
    base_fns = {id(a.fn) for a in base.actions}
    mutant_fns = {id(a.fn) for a in mutant.actions}
    gone = [a.name for a in base.actions if id(a.fn) not in mutant_fns]
    parts = []
    if gone:
        names = ", ".join(f"<code>{esc(n)}</code>" for n in gone)
        parts.append(f"<p>It replaces or drops the design's {names}.</p>")
    for a in mutant.actions:
        if id(a.fn) not in base_fns:
            text = source_of(a.fn) or "(source not available)"
            parts.append(
                f"<h3>the mutant's <code>{esc(a.name)}</code></h3><p>{esc(a.doc)}</p>{code_block(text)}"
            )
    dropped = {x.name for x in base.assumptions} - {x.name for x in mutant.assumptions}
    if dropped:
        parts.append(f"<p>assumptions dropped: {esc(', '.join(sorted(dropped)))}</p>")
    return "".join(parts) or note("the mutant changes no action (its constants differ, see above)")


def _value(v: Any) -> str:
    return f"<code>{esc(v)}</code>"


def step_table(cx: Counterexample) -> str:
    rows = []
    ids = []
    for s in cx.steps:
        args = ", ".join(map(str, s.args))
        event = (
            f"{s.event}({', '.join(f'{k}={v}' for k, v in (s.fields or {}).items())})"
            if s.event
            else "internal"
        )
        diff = (
            "<br>".join(
                f'<code>{esc(k)}</code>: <span class="before">{esc(b)}</span>'
                f' → <span class="after">{esc(a)}</span>'
                for k, (b, a) in s.changes.items()
            )
            or '<span class="muted">no change (stutter)</span>'
        )
        loop = " ↻" if cx.loop_start is not None and s.number - 1 == cx.loop_start else ""
        rows.append(
            [
                f'<a href="#step-{s.number}">{s.number}</a>{loop}',
                esc(s.process),
                f"<code>{esc(s.action)}</code>" + (f"({esc(args)})" if args else ""),
                esc(event),
                diff,
            ]
        )
        ids.append(f"step-{s.number}")
    return table(["step", "process", "action", "event", "state diff"], rows, ids)


def initial_table(spec: Spec, constants: Any, cx: Counterexample) -> str:
    shown = Instance(spec, constants).describe(cx.initial)
    return table(["variable", "initial value"], [[_value(k), _value(v)] for k, v in shown.items()])


def final_state(spec: Spec, constants: Any, cx: Counterexample) -> str:
    if not cx.steps:
        return ""
    shown = Instance(spec, constants).describe(cx.steps[-1].state)
    return details(
        "the whole state after the last step",
        table(["variable", "value"], [[_value(k), _value(v)] for k, v in shown.items()]),
    )


def replay_section(replays: Sequence[Replay], computed: bool) -> str:
    if not computed:
        return note("replay strings were not computed")
    if not replays:
        return note("the reference has no seeded twin of this bug (no failing harness scenario of this name)")
    rows = [
        [
            esc(r.scenario),
            code_block(r.command) if r.command else '<span class="muted">none</span>',
            esc(r.text),
        ]
        for r in replays
    ]
    return table(["harness scenario", "replay it", "what the harness found"], rows)


def mutant_body(
    design_name: str, base: Spec, run: MutantRun, replays: Sequence[Replay], replays_computed: bool
) -> str:
    m = run.mutant
    head = (
        f"<p>{esc(m.doc)}</p>"
        + table(
            ["design", "configuration", "must violate", "in steps", "explorer found"],
            [
                [
                    esc(design_name),
                    esc(m.config) + (f" with {esc(m.overrides)}" if m.overrides else ""),
                    f"<code>{esc(m.expect)}</code>",
                    str(m.length),
                    esc(run.summary),
                ]
            ],
        )
        + '<p class="muted">check it: <code>'
        + esc(f"lanecheck check {design_name} -c {m.config} --variant {m.name}")
        + "</code></p>"
    )
    bug = f"<h2>The bug</h2>{changed_actions(base, m.spec)}"
    r = run.result
    if r is None or r.counterexample is None or r.violation is None:
        return (
            head
            + bug
            + note(f"no counterexample: {esc(run.summary)}")
            + f"<h2>In the reference</h2>{replay_section(replays, replays_computed)}"
        )
    cx = r.counterexample
    v = r.violation
    ending = f"✗ {v.name}: {v.reason}"
    if cx.stutter:
        ending += " (then stutters forever)"
    diagram = sequence.svg(m.spec, cx, ending)
    consts = constants_text(run.constants)
    body = (
        head
        + bug
        + f"<h2>Counterexample ({cx.length} steps, {v.kind})</h2>"
        + f'<p class="muted">constants: <code>{esc(consts)}</code>. Link a step as <code>#step-K</code>.</p>'
        + details("initial state", initial_table(m.spec, run.constants, cx))
        + f'<div class="cx"><div><h3>Sequence diagram</h3>{diagram}</div>'
        + f"<div><h3>Steps and state diff</h3>{step_table(cx)}"
        + f'<p class="bad" id="violation">{esc(ending)}</p>'
        + f"{final_state(m.spec, run.constants, cx)}</div></div>"
        + f"<h2>In the reference</h2>{replay_section(replays, replays_computed)}"
    )
    return body
