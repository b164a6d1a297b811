"""Traces generated from the spec: projections of behaviours onto their labelled steps.

``covering_behaviours`` returns complete behaviours of a configuration (each
ends in a terminal state, so after ``stop_end`` when the configuration stops)
that together fire every labelled action with every combination of its event
fields (items aside); ``random_walk`` gives one random behaviour.

``export`` writes them as trace files of the design's own format (its header names the design
and its configuration), and never leaves a bad or partial set behind: every trace is validated
against the spec before the first file is written, the files are written into a temporary
directory beside the target and moved into place only when all of them are written.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any

from spec.language import Instance, Spec, Transition

Event = dict[str, Any]


def project(transitions: Iterable[Transition]) -> list[Event]:
    """The trace events of a behaviour: its labelled steps, numbered from seq 1."""
    events: list[Event] = []
    for t in transitions:
        if t.event is None or t.fields is None:
            continue
        events.append({"seq": len(events) + 1, "thread": str(t.process), "event": t.event, **dict(t.fields)})
    return events


class ExportError(ValueError):
    """The traces could not be exported; nothing was written."""


def header(constants: Any, design: str | None = None) -> Event:
    """The header line of a ``design`` trace (default: the design of a header that names none,
    ``validator.default_design()``); ``constants.header()`` gives its ``config``."""
    from model_checks.conformance.validator import default_design

    name = design if design is not None else default_design()
    return {"trace": "lanecheck", "version": 1, "design": name, "config": constants.header()}


def lines(
    constants: Any, events: Iterable[Event], design: str | None = None, first: Event | None = None
) -> Iterator[str]:
    """The trace's lines: ``first`` as the header (default: ``header(constants, design)``), then
    the events."""
    yield json.dumps(header(constants, design) if first is None else first)
    for ev in events:
        yield json.dumps(ev)


def signature(t: Transition) -> tuple[Hashable, ...]:
    """What a covering set must show at least once: the action and its event fields (items aside)."""
    assert t.fields is not None
    fields = tuple(
        sorted((k, len(v) if isinstance(v, list) else v) for k, v in t.fields.items() if k != "item")
    )
    return (t.action.name, fields)


def random_walk(spec: Spec, constants: Any, rng: random.Random, max_steps: int = 10_000) -> list[Transition]:
    inst = Instance(spec, constants)
    state = rng.choice(inst.initial_states())
    path: list[Transition] = []
    for _ in range(max_steps):
        options = list(inst.successors(state))
        if not options:
            break
        t = rng.choice(options)
        path.append(t)
        state = t.state
    return path


def covering_behaviours(spec: Spec, constants: Any) -> list[list[Transition]]:
    """Complete behaviours that together cover every labelled (action, event fields) pair reachable."""
    inst = Instance(spec, constants)
    init = inst.initial_states()
    index: dict[Any, int] = {}
    parent: list[tuple[int, Transition] | None] = []
    states: list[Any] = []
    first_edge: dict[tuple[Hashable, ...], tuple[int, Transition]] = {}
    for s in init:
        if s not in index:
            index[s] = len(states)
            states.append(s)
            parent.append(None)
    queue = deque(range(len(states)))
    while queue:
        i = queue.popleft()
        for t in inst.successors(states[i]):
            if t.event is not None:
                first_edge.setdefault(signature(t), (i, t))
            if t.state not in index:
                index[t.state] = len(states)
                states.append(t.state)
                parent.append((i, t))
                queue.append(index[t.state])

    def path_to(i: int) -> list[Transition]:
        out: list[Transition] = []
        while parent[i] is not None:
            j, t = parent[i]  # type: ignore[misc]
            out.append(t)
            i = j
        out.reverse()
        return out

    def complete(state: Any) -> list[Transition]:
        if not any(True for _ in inst.successors(state)):
            return []
        seen = {state}
        back: dict[Any, tuple[Any, Transition]] = {}
        frontier = deque([state])
        while frontier:
            s = frontier.popleft()
            if inst.is_terminal(s) and not any(True for _ in inst.successors(s)):
                out: list[Transition] = []
                while s != state:
                    s, t = back[s]
                    out.append(t)
                out.reverse()
                return out
            for t in inst.successors(s):
                if t.state not in seen:
                    seen.add(t.state)
                    back[t.state] = (s, t)
                    frontier.append(t.state)
        return []

    behaviours: list[list[Transition]] = []
    covered: set[tuple[Hashable, ...]] = set()
    for sig in sorted(first_edge, key=repr):
        if sig in covered:
            continue
        i, t = first_edge[sig]
        path = [*path_to(i), t]
        path += complete(t.state)
        covered.update(signature(x) for x in path if x.event is not None)
        behaviours.append(path)
    return behaviours


def export(
    directory: Path,
    spec: Spec,
    constants: Any,
    name: str = "trace",
    design: str | None = None,
    *,
    replace: bool = False,
    first: Event | None = None,
    translate: Callable[[Event], Event] | None = None,
) -> list[Path]:
    """Write the covering behaviours of ``spec`` at ``constants`` as ``<name>-NNN.jsonl`` files.

    ``design`` names the trace format (default: ``validator.default_design()``). A format whose
    events are not the spec's labels word for word gives ``first`` (its header line) and
    ``translate`` (one spec event to the trace's event). Each trace is
    validated first, as a complete behaviour when the design's format takes ``complete`` (one
    whose traces show their end themselves, as the Work Lane's with ``stop_end``, says
    ``takes_complete = False``); if one does not validate, ``ExportError`` and nothing is written.
    ``replace``: earlier ``<name>-*.jsonl`` files in ``directory`` are removed once the new ones
    are in place (other files are left alone)."""
    from model_checks.conformance.designs import design_format, takes_complete
    from model_checks.conformance.validator import default_design, validate_lines

    design = design if design is not None else default_design()
    fmt = design_format(design)
    complete = fmt is None or takes_complete(fmt)
    traces = []
    for behaviour in covering_behaviours(spec, constants):
        events = project(behaviour)
        if translate is not None:
            events = [translate(ev) for ev in events]
        traces.append(list(lines(constants, events, design, first)))
    return write_validated(
        directory,
        traces,
        lambda trace: validate_lines(trace, complete=complete),
        design,
        name,
        replace=replace,
    )


def write_validated(
    directory: Path,
    traces: Iterable[list[str]],
    validate: Callable[[list[str]], Any],
    design: str,
    name: str,
    *,
    replace: bool,
) -> list[Path]:
    """Write each trace (its lines) as ``<name>-NNN.jsonl`` once every one has a verdict of code 0
    from ``validate``; else ``ExportError`` and nothing written. ``replace``: earlier
    ``<name>-*.jsonl`` files go once the new ones are in place."""
    texts: dict[str, str] = {}
    for n, trace in enumerate(traces, start=1):
        verdict = validate(trace)
        if verdict.code != 0:  # never expected: the spec's own behaviours
            raise ExportError(
                f"{design}: generated trace {n} does not validate ({verdict.message}); nothing written"
            )
        texts[f"{name}-{n:03d}.jsonl"] = "\n".join(trace) + "\n"
    return write_all(directory, texts, stale=f"{name}-*.jsonl" if replace else None)


def write_all(directory: Path, texts: dict[str, str], stale: str | None = None) -> list[Path]:
    """Put every file of ``texts`` in ``directory``, or none of them: written into a temporary
    directory on the same file system first, then renamed into place. ``stale``: a glob of files
    already there that the new set replaces (removed after the move)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    fresh = not directory.exists()
    staging = Path(
        tempfile.mkdtemp(prefix=".lanecheck-export-", dir=directory.parent if fresh else directory)
    )
    try:
        for file_name, text in texts.items():
            (staging / file_name).write_text(text, encoding="utf-8")
        if fresh:
            os.rename(staging, directory)  # atomic: the directory appears with every file in it
            return [directory / file_name for file_name in texts]
        old = set(directory.glob(stale)) if stale is not None else set()
        written = []
        for file_name in texts:
            os.replace(staging / file_name, directory / file_name)
            written.append(directory / file_name)
        for path in old - set(written):
            path.unlink()
        return written
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
