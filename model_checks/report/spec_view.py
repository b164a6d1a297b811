"""The spec in reviewer form: variables, actions (guard and effect as written), invariants,
properties, fairness, symmetry, assumptions and terminal states — all read from the ``Spec``."""

from __future__ import annotations

import dataclasses
from typing import Any

from model_checks.report.html import code_block, details, esc, note, table
from model_checks.report.source import domain_name, field_comments, source_of
from spec.language import Action, EventuallyAlways, Instance, LeadsTo, Spec, SpecError


def _source_details(label: str, fn: Any) -> str:
    text = source_of(fn)
    if text is None:
        return '<span class="muted">source not available</span>'
    return details(label, code_block(text))


def variables_section(spec: Spec, constants: Any) -> str:
    try:
        inst = Instance(spec, constants)
        state = inst.initial_states()[0]
        shown = inst.describe(state)
    except (SpecError, IndexError) as problem:
        return note(f"initial state not computed: {esc(problem)}")
    comments = field_comments(type(state)) if hasattr(state, "_fields") else {}
    rows = []
    for name, value in shown.items():
        kind, comment = comments.get(name, ("", ""))
        rows.append(
            [
                f"<code>{esc(name)}</code>",
                f"<code>{esc(kind)}</code>",
                esc(comment),
                f"<code>{esc(value)}</code>",
            ]
        )
    body = table(["variable", "type", "meaning (its comment)", "initial value (first config)"], rows)
    if hasattr(state, "_fields"):
        body += _source_details("the variables as declared", type(state))
    return body


def constants_text(constants: Any) -> str:
    if dataclasses.is_dataclass(constants) and not isinstance(constants, type):
        return ", ".join(f"{f.name}={getattr(constants, f.name)!r}" for f in dataclasses.fields(constants))
    return repr(constants)


def _parameters(action: Action) -> str:
    names = [domain_name(d) for d in action.domains]
    return f"{esc(names[0])}" + (f" × {esc(' × '.join(names[1:]))}" if len(names) > 1 else "")


def actions_section(spec: Spec) -> str:
    rows = []
    for a in spec.actions:
        at = ", ".join(sorted(map(str, a.at))) if a.at is not None else "any"
        rows.append(
            [
                f'<code id="action-{esc(a.name)}">{esc(a.name)}</code>',
                _parameters(a),
                esc(a.event) if a.event else '<span class="muted">internal</span>',
                esc(at),
                esc(a.doc) + _source_details("guard and effect", a.fn),
            ]
        )
    return table(["action", "process × parameters", "event", "fires at pc", "what it does"], rows)


def invariants_section(spec: Spec) -> str:
    rows = [
        [
            f'<code id="inv-{esc(inv.name)}">{esc(inv.name)}</code>',
            esc(inv.doc) + _source_details("predicate", inv.fn),
            esc(", ".join(inv.reads)) if inv.reads else '<span class="muted">all</span>',
        ]
        for inv in spec.invariants
    ]
    if not rows:
        return note("this spec declares no invariants")
    return table(["invariant", "meaning", "reads"], rows)


def properties_section(spec: Spec) -> str:
    rows = []
    for prop in spec.properties:
        if isinstance(prop, LeadsTo):
            rows.append(
                [
                    f"<code>{esc(prop.name)}</code>",
                    "P ~> Q (leads to)",
                    esc(prop.doc) + _source_details("P", prop.p) + _source_details("Q", prop.q),
                ]
            )
        elif isinstance(prop, EventuallyAlways):
            rows.append(
                [
                    f"<code>{esc(prop.name)}</code>",
                    "&lt;&gt;[]Q (eventually always)",
                    esc(prop.doc) + _source_details("Q", prop.q),
                ]
            )
    if not rows:
        return note("this spec declares no liveness properties")
    return table(["property", "form", "meaning"], rows)


def rest_section(spec: Spec, constants: Any) -> str:
    """Fairness, symmetry, assumptions, terminal states, state constraint, program counters."""
    rows: list[list[str]] = []
    for wf in spec.fair:
        try:
            members = ", ".join(map(str, wf.domain(constants)))
        except Exception as problem:  # a domain that rejects this configuration is shown, not fatal
            members = f"(not computed: {problem})"
        rows.append(
            ["fairness", f"WF per process of <code>{esc(domain_name(wf.domain))}</code>", esc(members)]
        )
    if not spec.fair:
        rows.append(["fairness", "none: no process must ever take a step", ""])
    for label, fn in (
        ("symmetry", spec.symmetry_fn),
        ("terminal states", spec.terminal_fn),
        ("state constraint", spec.constraint_fn),
    ):
        if fn is None:
            rows.append([label, '<span class="muted">none</span>', ""])
        else:
            doc = (fn.__doc__ or "").strip().split("\n")[0]
            rows.append([label, f"<code>{esc(fn.__name__)}</code> {esc(doc)}", _source_details("source", fn)])
    for assumption in spec.assumptions:
        rows.append(["assumption", f"<code>{esc(assumption.name)}</code> {esc(assumption.doc)}", ""])
    for pc in spec.program_counters:
        rows.append(
            [
                "program counter",
                f"per process of <code>{esc(domain_name(pc.domain))}</code>",
                _source_details("source", pc.fn),
            ]
        )
    return table(["what", "declared", "detail"], rows)


def spec_section(spec: Spec, constants: Any) -> str:
    intro = f"<p>{esc(spec.doc.strip().splitlines()[0])}</p>" if spec.doc.strip() else ""
    full_doc = details("the spec module's description", code_block(spec.doc)) if spec.doc.strip() else ""
    return (
        f"{intro}{full_doc}<h3>Variables</h3>{variables_section(spec, constants)}"
        f"<h3>Actions</h3>{actions_section(spec)}"
        f"<h3>Invariants</h3>{invariants_section(spec)}"
        f"<h3>Liveness properties</h3>{properties_section(spec)}"
        f"<h3>Fairness, symmetry, assumptions</h3>{rest_section(spec, constants)}"
    )
