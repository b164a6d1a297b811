"""The explorer's HTML: plain links and tables, one inline style sheet, no script.

Everything shown comes from the spec through ``Instance`` (``describe``, ``successors``,
invariants), so every design renders the same way; every text is escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from model_checks.serve import walk as w
from model_checks.serve.shortest import Found, NoneFound
from model_checks.serve.subject import Subject
from spec.language import Transition

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; color: #1d2125; }
h1 { font-size: 1.4em; margin-bottom: .2em; } h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
a { color: #0b5cad; } code, td.value, .sig { font-family: ui-monospace, monospace; font-size: .92em; }
.grid { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 2em; }
table { border-collapse: collapse; } td, th { padding: .15em .6em; vertical-align: top; text-align: left; }
#state > tbody > tr > th { font-weight: 600; white-space: nowrap; }
table.fn td, table.fn th { padding: 0 .5em 0 0; font-weight: normal; }
.changed { background: #fff1b8; }
.holds::before { content: "\\2713  "; color: #1a7f37; }
.violated::before { content: "\\2717  "; color: #cf222e; }
li.violated { color: #cf222e; font-weight: 600; }
a.action { display: inline-block; margin: .2em 0; padding: .3em .7em; border: 1px solid #8c959f;
  border-radius: 6px; background: #f6f8fa; color: inherit; text-decoration: none; }
a.action:hover { background: #eaeef2; } a.action.cx-next { border-color: #cf222e; background: #ffebe9; }
.sig { color: #57606a; margin-left: .5em; }
.note { color: #57606a; } .bad { color: #cf222e; font-weight: 600; }
nav a { margin-right: .8em; } ol#path li.current { font-weight: 600; }
"""


def _doc(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # no favicon request: a 404 for it would be a console error in every page
        f'<link rel="icon" href="data:,"><title>{escape(title)}</title><style>{STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )


def href(subject: Subject, init: int = 0, path: Sequence[int] = ()) -> str:
    """The shareable URL of one state: ``/DESIGN/CONFIG?mutant=M&path=3.0.1``."""
    return location(subject.design, subject.config, subject.mutant, init, path)


def location(design: str, config: str, mutant: str | None, init: int = 0, path: Sequence[int] = ()) -> str:
    params: dict[str, str] = {}
    if mutant is not None:
        params["mutant"] = mutant
    if init:
        params["init"] = str(init)
    if path:
        params["path"] = w.encode(list(path))
    query = urlencode(params, safe=".")
    return f"/{quote(design, safe='')}/{quote(config, safe='')}" + (f"?{query}" if query else "")


def counterexample_href(subject: Subject) -> str:
    query = urlencode({"mutant": subject.mutant}) if subject.mutant else ""
    base = f"/{quote(subject.design, safe='')}/{quote(subject.config, safe='')}/counterexample"
    return base + (f"?{query}" if query else "")


def value_html(value: Any, changed: Mapping[str, Any] | None = None, name: str = "") -> str:
    """A state value, pretty: a function as a small table (its changed entries marked), a sequence
    in brackets, anything else as text."""
    if isinstance(value, Mapping):
        rows = []
        for k, v in value.items():
            mark = ' class="changed"' if changed is not None and f"{name}[{k}]" in changed else ""
            rows.append(f"<tr{mark}><th>{escape(str(k))}</th><td>{value_html(v)}</td></tr>")
        return f'<table class="fn">{"".join(rows)}</table>' if rows else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(value_html(v) for v in value) + "]"
    return escape(str(value))


def _state_table(variables: Mapping[str, Any], changed: Mapping[str, Any]) -> str:
    rows = []
    for name, value in variables.items():
        touched = name in changed or any(k.startswith(f"{name}[") for k in changed)
        mark = ' class="changed"' if touched else ""
        rows.append(
            f'<tr{mark} data-variable="{escape(name)}"><th>{escape(name)}</th>'
            f'<td class="value">{value_html(value, changed, name)}</td></tr>'
        )
    return f'<table id="state"><tbody>{"".join(rows)}</tbody></table>'


def _invariants(verdicts: list[w.Verdict], deadlock: bool, terminal: bool) -> str:
    items = []
    for v in verdicts:
        cls = "holds" if v.holds else "violated"
        why = f' — <span class="reason">{escape(v.reason)}</span>' if v.reason is not None else ""
        title = f' title="{escape(v.doc)}"' if v.doc else ""
        items.append(f'<li class="{cls}" data-invariant="{escape(v.name)}"{title}>{escape(v.name)}{why}</li>')
    if deadlock:
        items.append(
            '<li class="violated" data-invariant="Deadlock">Deadlock — <span class="reason">no action '
            "is enabled and this is not a state where the system is done</span></li>"
        )
    elif terminal:
        items.append('<li class="holds" data-invariant="Deadlock">Deadlock — done: a terminal state</li>')
    else:
        items.append('<li class="holds" data-invariant="Deadlock">Deadlock</li>')
    return f'<ul id="invariants">{"".join(items)}</ul>'


def _actions(subject: Subject, walk: w.Walk, enabled: list[Transition], follow: int | None) -> str:
    if not enabled:
        return '<p id="actions" class="note">No action is enabled in this state.</p>'
    items = []
    for i, t in enumerate(enabled):
        cls = "action cx-next" if i == follow else "action"
        target = escape(href(subject, walk.init, (*walk.path, i)))
        hint = ' title="the next step of the counterexample"' if i == follow else ""
        items.append(
            f'<li><a class="{cls}" data-index="{i}"{hint} href="{target}">'
            f'{escape(w.label(t))}</a><span class="sig">{escape(w.signature(t))}</span></li>'
        )
    return f'<ol id="actions" start="0">{"".join(items)}</ol>'


def _path(subject: Subject, walk: w.Walk) -> str:
    items = [f'<li><a href="{escape(href(subject, walk.init))}">initial state</a></li>']
    for n, t in enumerate(walk.steps, start=1):
        cls = ' class="current"' if n == len(walk.steps) else ""
        link = href(subject, walk.init, walk.path[:n])
        items.append(f'<li{cls}><a href="{escape(link)}">{escape(w.label(t))}</a></li>')
    return f'<ol id="path" start="0">{"".join(items)}</ol>'


def _counterexample(
    subject: Subject, walk: w.Walk, known: Found | NoneFound | None
) -> tuple[str, int | None]:
    """The counterexample panel, and the index of the action that continues it from here."""
    if subject.mutant is None:
        return (
            '<p id="counterexample" class="note">The design itself: no counterexample to jump to '
            "(<code>lanecheck check</code> explores it; every mutant has one).</p>",
            None,
        )
    target = escape(counterexample_href(subject))
    jump = f'<a id="jump" class="action" href="{target}">Jump to the counterexample</a>'
    if known is None:
        return (
            f'<div id="counterexample">{jump} <span class="note">(the explorer\'s shortest)</span></div>',
            None,
        )
    if isinstance(known, NoneFound):
        return f'<p id="counterexample" class="note">No counterexample: {escape(known.reason)}.</p>', None
    on_it = known.init == walk.init and known.path[: len(walk.path)] == walk.path
    follow = known.path[len(walk.path)] if on_it and len(walk.path) < len(known.path) else None
    loop = ""
    if known.loop_start is not None:
        loop = f"; it loops back to the state after step {known.loop_start}"
        loop += " and then stays in its last state for ever" if known.stutter else ""
    where = "you are on it" if on_it else "you have left it"
    return (
        f'<div id="counterexample">{jump} <span class="note">{len(known.path)} steps to '
        f"{escape(known.name)} ({escape(known.kind)}){escape(loop)}; {where}"
        f"{'; its next step is marked' if follow is not None else ''}.</span></div>",
        follow,
    )


def explorer_page(
    subject: Subject,
    walk: w.Walk,
    configs: Sequence[str],
    mutants: Sequence[str],
    known: Found | NoneFound | None,
) -> str:
    inst = subject.instance
    enabled = list(inst.successors(walk.state))
    verdicts = w.invariants(inst, walk.state)
    deadlock = w.deadlocked(inst, walk.state, enabled)
    changed = w.changes(inst, walk)
    panel, follow = _counterexample(subject, walk, known)
    back = (
        f'<a id="back" href="{escape(href(subject, walk.init, walk.path[:-1]))}">Back</a>'
        if walk.path
        else '<span class="note">Back</span>'
    )
    nav_configs = " ".join(
        f'<a href="{escape(location(subject.design, c, subject.mutant))}">{escape(c)}</a>' for c in configs
    )
    nav_mutants = " ".join(
        f'<a href="{escape(location(subject.design, subject.config, m))}">{escape(m)}</a>' for m in mutants
    )
    spec_link = f'<a href="{escape(location(subject.design, subject.config, None))}">the spec</a>'
    failing = [v.name for v in verdicts if not v.holds] + (["Deadlock"] if deadlock else [])
    status = (
        f'<p id="status" class="bad">Violated here: {escape(", ".join(failing))}</p>'
        if failing
        else '<p id="status" class="note">Every invariant holds here.</p>'
    )
    about = ""
    if subject.mutant:
        about = (
            f'<p class="note">Seeded bug, must violate <b>{escape(subject.expect)}</b>: '
            f"{escape(subject.doc)}</p>"
        )
    body = (
        f'<nav><a href="/">designs</a> {spec_link} · configurations: {nav_configs} · '
        f"mutants: {nav_mutants}</nav>"
        f"<h1>{escape(subject.title)}</h1>{about}{panel}"
        f'<div class="grid"><section><h2>State after {len(walk.steps)} step(s)</h2>{status}'
        f"{_state_table(inst.describe(walk.state), changed)}</section>"
        f"<section><h2>Invariants</h2>{_invariants(verdicts, deadlock, inst.is_terminal(walk.state))}"
        f"<h2>Enabled actions</h2>{_actions(subject, walk, enabled, follow)}"
        f'<h2>Path</h2><p>{back} · <a id="restart" href="{escape(href(subject, walk.init))}">Restart</a>'
        f' · <a id="share" href="{escape(href(subject, walk.init, walk.path))}">Link to this state</a></p>'
        f"{_path(subject, walk)}</section></div>"
    )
    return _doc(subject.title, body)


def index_page(designs: Mapping[str, tuple[str, str, Sequence[str], Sequence[str]]]) -> str:
    """``designs``: name -> (summary, default config, configurations, mutants)."""
    rows = []
    for name, (summary, default, configs, mutants) in designs.items():
        spec = f'<a href="{escape(location(name, default, None))}">{escape(name)}</a>'
        cfgs = " ".join(f'<a href="{escape(location(name, c, None))}">{escape(c)}</a>' for c in configs)
        muts = " ".join(
            f'<a href="{escape(f"/{quote(name)}?mutant={quote(m)}")}">{escape(m)}</a>' for m in mutants
        )
        rows.append(f"<tr><th>{spec}</th><td>{escape(summary)}</td><td>{cfgs}</td><td>{muts}</td></tr>")
    body = (
        "<h1>lanecheck: state explorer</h1><p class='note'>Pick a design's spec, or one of its seeded "
        "bugs, and step through its states.</p>"
        '<table id="designs"><thead><tr><th>design</th><th>what it is</th><th>configurations</th>'
        f"<th>mutants</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    return _doc("lanecheck serve", body)


def error_page(status: int, message: str, links: Sequence[tuple[str, str]] = ()) -> str:
    more = " · ".join(f'<a href="{escape(url)}">{escape(text)}</a>' for url, text in links)
    body = (
        f'<h1>{status}</h1><p id="error" class="bad">{escape(message)}</p>'
        f'<p><a href="/">designs</a>{" · " + more if more else ""}</p>'
    )
    return _doc(f"{status}: {message}", body)
