"""`lanecheck validate TRACE...`: does some behaviour of the spec produce each trace?

One file (or ``-``, standard input) is judged and printed as a single verdict. Many files,
folders (every ``*.jsonl`` under them) and glob patterns are judged in parallel processes
(``--jobs``) and summed up in groups: the allowed ones counted, the others grouped by the rule
they break (or the way they are malformed, or why they could not be read), each file with its
own message. A file that cannot be read is reported in its group and never stops the batch.

This module is imported when the command runs: it imports the conformance layer (and, through a
trace's header, only that design's trace format) when it judges, and Rich only to print one
verdict.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from model_checks.commands import CommandError, count
from model_checks.conformance.designs import ENGINES  # names only: no design's format is imported
from model_checks.conformance.reader import clip, limits_text, printable

if TYPE_CHECKING:
    from rich.console import Console

    from model_checks.conformance import Verdict

# Text output is for people: a value longer than this is cut (``--json`` keeps it whole).
SHOWN_CHARS = 400
MESSAGE_CHARS = 2_000
LISTED_CHARS = 300  # a file's message under its group in a batch summary
MAX_JOBS = 256
TRACE_SUFFIX = ".jsonl"  # the files a folder argument stands for (recursively)
GLOB_CHARS = frozenset("*?[")

# A batch sorts each trace into one of these; the exit code is the largest code among its traces.
ALLOWED, NOT_ALLOWED, MALFORMED, NOT_VALIDATED = "allowed", "not allowed", "malformed", "not validated"
CATEGORIES = (ALLOWED, NOT_ALLOWED, MALFORMED, NOT_VALIDATED)
CODE_OF = {ALLOWED: 0, NOT_ALLOWED: 1, MALFORMED: 2, NOT_VALIDATED: 2}


def _plain(value: str, limit: int) -> str:
    """Safe to print: cut to ``limit``, lone surrogates escaped."""
    return printable(clip(value, limit))


# The word a verdict's first line starts with, and its colour on a terminal.
HEADS = {0: ("ALLOWED", "green"), 1: ("NOT ALLOWED", "red"), 2: ("MALFORMED", "red")}


def verdict_lines(verdict: Verdict) -> Iterator[tuple[str, str]]:
    """The lines that show one verdict, each as (a coloured head word or "", the rest), safe to print."""
    yield HEADS[min(verdict.code, 2)][0], f" {_plain(verdict.message, MESSAGE_CHARS)}"
    if verdict.code == 1 and verdict.rule is not None:
        yield "", f"  rule {verdict.rule}: {_plain(verdict.rule_text() or '', MESSAGE_CHARS)}"
    if verdict.last_states:
        title = "states the spec could be in" + (" before that event" if verdict.code == 1 else "")
        yield "", f"  {title}:"
        for n, state in enumerate(verdict.last_states, start=1):
            yield "", f"   #{n}"
            for k, v in state.items():
                shown = _plain(json.dumps(v, ensure_ascii=False), SHOWN_CHARS)
                yield "", f"     {_plain(str(k), SHOWN_CHARS)}: {shown}"


def render(verdict: Verdict, console: Console) -> None:
    """One verdict on a Rich console (its head word coloured)."""
    from rich.markup import escape

    colour = dict(HEADS.values())
    for head, rest in verdict_lines(verdict):
        shown = f"[{colour[head]}]{head}[/{colour[head]}]{escape(rest)}" if head else escape(rest)
        console.print(shown, highlight=False, soft_wrap=True, emoji=False)  # the message, as it is


def write_verdict(verdict: Verdict, out: TextIO) -> None:
    """One verdict as plain text: what ``render`` prints where there is no colour to show."""
    out.write("".join(f"{head}{rest}\n" for head, rest in verdict_lines(verdict)))


def _coloured() -> bool:
    """Whether stdout shows colour (Rich is imported only then: it costs start-up time)."""
    return sys.stdout.isatty() or bool(os.environ.get("FORCE_COLOR"))


def _json(verdict: Verdict) -> str:
    doc: dict[str, Any] = verdict.as_json()
    # ensure_ascii escapes every non-ASCII character, a lone surrogate included: any stdout takes it.
    return json.dumps(doc, ensure_ascii=True)


# ----------------------------------------------------------------------------- the traces named


@dataclass(frozen=True)
class Named:
    """One trace file an argument names, or (``problem``) why an argument names none."""

    file: str
    problem: str | None = None


def _has_glob(text: str) -> bool:
    return not GLOB_CHARS.isdisjoint(text)


def _matched(path: str) -> Named:
    """A name a folder or a pattern stands for: a regular file is judged; anything else is reported
    here, never opened (a FIFO would block the batch for ever) and never skipped (the exit code would
    say every trace was allowed)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as problem:  # a dangling link: what opening it says too
        return Named(path, f"cannot read: {problem.strerror or type(problem).__name__}")
    return Named(path) if stat.S_ISREG(mode) else Named(path, "not a regular file")


def _folder(path: Path) -> Iterator[Named]:
    found = sorted(path.rglob(f"*{TRACE_SUFFIX}"))
    if not found:
        yield Named(str(path), f"not a file, and no trace (*{TRACE_SUFFIX}) in this folder")
    for p in found:
        # A folder named *.jsonl is taken as a pattern's match is (its files again: ``expand`` keeps
        # one of each); a link to one is not followed (it could lead back here).
        yield from _folder(p) if p.is_dir() and not p.is_symlink() else [_matched(str(p))]


def _expand(argument: str) -> Iterator[Named]:
    path = Path(argument)
    if path.is_file():
        yield Named(argument)
    elif path.is_dir():
        yield from _folder(path)
    elif _has_glob(argument):
        import glob

        matches = sorted(glob.glob(argument, recursive=True))
        if not matches:
            yield Named(argument, "no file matches this pattern")
        for match in matches:
            yield from _expand(match) if Path(match).is_dir() else [_matched(match)]
    else:
        yield Named(argument, "not a file" if path.exists() else "no such file")


def expand(arguments: Iterable[str]) -> list[Named]:
    """The trace files named by files, folders (their ``*.jsonl``, recursively) and glob patterns,
    in the order given (a folder's and a pattern's files sorted), each file once."""
    seen: set[str] = set()
    named: list[Named] = []
    for argument in arguments:
        for entry in _expand(argument):
            key = entry.file if entry.problem else os.path.realpath(entry.file)
            if key not in seen:
                seen.add(key)
                named.append(entry)
    return named


# ----------------------------------------------------------------------------- judging one file


@dataclass(frozen=True)
class Judged:
    """What a batch keeps of one trace's verdict: its category, its group, its own message,
    and (for ``--json``) the whole verdict."""

    file: str
    category: str
    group: str
    message: str
    doc: dict[str, Any] | None = None

    @property
    def code(self) -> int:
        return CODE_OF[self.category]

    def as_json(self) -> dict[str, Any]:
        doc = self.doc or {"allowed": False, "code": self.code, "message": self.message}
        return {"file": self.file, "verdict": self.category, "group": self.group, **doc}


_SEQ = re.compile(r"^(seq|line) \d+: ")


def _group(verdict: Verdict) -> str:
    """The group a verdict is counted in: the same for every trace that fails the same way."""
    if verdict.code == 0:
        return "allowed as a prefix" if verdict.prefix else "allowed"
    if verdict.code == 1 and verdict.rule is not None:
        words = verdict.rule_text()
        return f"{verdict.design} rule {verdict.rule}" + (f": {words}" if words else "")
    # Without a rule: the message without its place in the trace (the file's own line says it).
    return _SEQ.sub("", verdict.message)


def judge(file: str, *, engine: str, complete: bool, whole: bool) -> Judged:
    """Validate one file; anything that keeps it from being judged is its verdict, not an error.

    Runs in the batch's worker processes (a module-level function, so that it can be sent there).
    """
    from model_checks.conformance import validate_file
    from model_checks.conformance.trace_schema import SchemaUnreadable

    try:
        verdict = validate_file(file, engine=engine, complete=complete)
    except SchemaUnreadable as problem:  # the design's fault, said as such
        return Judged(file, NOT_VALIDATED, str(problem), str(problem))
    except OSError as problem:
        why = problem.strerror or str(problem) or type(problem).__name__
        return Judged(file, NOT_VALIDATED, f"cannot read: {why}", f"cannot read: {why}")
    except (ValueError, MemoryError, RecursionError) as problem:
        text = {MemoryError: "out of memory", RecursionError: "input nested too deeply"}.get(
            type(problem), str(problem)
        )
        return Judged(file, NOT_VALIDATED, text, text)
    except Exception as problem:  # a bug in lanecheck: said as such, and the batch goes on
        text = f"internal error {type(problem).__name__}: {problem} (a bug in lanecheck)"
        return Judged(file, NOT_VALIDATED, text, text)
    category = (ALLOWED, NOT_ALLOWED, MALFORMED)[verdict.code]
    return Judged(file, category, _group(verdict), verdict.message, verdict.as_json() if whole else None)


def _unnamed(entry: Named) -> Judged:
    problem = entry.problem or ""
    return Judged(entry.file, NOT_VALIDATED, problem, problem)


def judge_all(named: list[Named], judge_one: Callable[[str], Judged], jobs: int) -> Iterator[Judged]:
    """Each entry's verdict, in ``named``'s order; the files judged in ``jobs`` processes."""
    files = [entry.file for entry in named if entry.problem is None]
    jobs = min(jobs, len(files))
    if jobs <= 1:
        verdicts: Iterator[Judged] = map(judge_one, files)
        yield from _merge(named, verdicts)
        return
    from concurrent.futures import ProcessPoolExecutor

    # Several files to a task, so that short traces do not cost a round trip each.
    chunk = max(1, min(64, len(files) // (jobs * 4)))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from _merge(named, pool.map(judge_one, files, chunksize=chunk))


def _merge(named: list[Named], verdicts: Iterator[Judged]) -> Iterator[Judged]:
    for entry in named:
        yield _unnamed(entry) if entry.problem is not None else next(verdicts)


# ----------------------------------------------------------------------------- the summary


@dataclass
class Group:
    category: str
    label: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (file, its own message, clipped)

    def as_json(self) -> dict[str, Any]:
        return {
            "verdict": self.category,
            "group": self.label,
            "count": len(self.files),
            "files": [f for f, _ in self.files],
        }


@dataclass
class Summary:
    """The batch so far: counts by category and the groups (only paths and short messages kept)."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    groups: dict[tuple[str, str], Group] = field(default_factory=dict)

    def add(self, judged: Judged) -> None:
        self.counts[judged.category] += 1
        key = (judged.category, judged.group)
        group = self.groups.setdefault(key, Group(*key))
        shown = "" if judged.category == ALLOWED else clip(judged.message, LISTED_CHARS)  # only counted
        group.files.append((judged.file, shown))

    @property
    def code(self) -> int:
        return max((CODE_OF[c] for c, n in self.counts.items() if n), default=0)

    def ordered(self) -> list[Group]:
        rank = {c: i for i, c in enumerate(CATEGORIES)}
        return sorted(self.groups.values(), key=lambda g: (rank[g.category], -len(g.files), g.label))

    def headline(self) -> str:
        total = sum(self.counts.values())
        shown = [f"{n} {c}" for c, n in self.counts.items() if n or c == ALLOWED]
        return f"{', '.join(shown)} ({total} trace{'s' if total != 1 else ''})"

    def as_json(self) -> dict[str, Any]:
        return {
            "traces": sum(self.counts.values()),
            **{c.replace(" ", "_"): n for c, n in self.counts.items()},
            "code": self.code,
            "groups": [g.as_json() for g in self.ordered()],
        }


def write_text(summary: Summary, out: TextIO) -> None:
    out.write(summary.headline() + "\n")
    for group in summary.ordered():
        out.write(f"{group.category.upper()}: {len(group.files)} × {_plain(group.label, LISTED_CHARS)}\n")
        if group.category == ALLOWED:
            continue  # counted; the others list each file with its own message
        for file, message in group.files:
            out.write(f"    {_plain(file, SHOWN_CHARS)}: {_plain(message, LISTED_CHARS)}\n")


def run_batch(named: list[Named], judge_one: Callable[[str], Judged], jobs: int, as_json: bool) -> int:
    """Judge every entry, print the summary (with ``as_json``: each verdict as it comes, then the
    summary, one JSON object), and return the exit code."""
    summary = Summary()
    out = sys.stdout
    if as_json:
        out.write('{"files": [')
    for n, judged in enumerate(judge_all(named, judge_one, jobs)):
        summary.add(judged)
        if as_json:  # written as it comes: the batch's memory does not grow with its verdicts
            out.write(("\n" if n == 0 else ",\n") + json.dumps(judged.as_json(), ensure_ascii=True))
    if as_json:
        out.write('\n], "summary": ' + json.dumps(summary.as_json(), ensure_ascii=True) + "}\n")
    else:
        write_text(summary, out)
    return summary.code


# ----------------------------------------------------------------------------- the command

HELP = (
    "Does some behaviour of the spec produce each trace? Exit 0 every trace allowed (or an allowed"
    " prefix), 1 some not allowed, 2 some not well-formed or unreadable."
    "\n\n"
    "One file (or -, stdin) prints its verdict: the broken rule with the seq, or the malformed line."
    " Many files, folders (every *.jsonl under them) and glob patterns (quoted, expanded here) are"
    " validated in parallel processes (--jobs) and summed up: the allowed ones counted, the others"
    " grouped by the rule they break, each file with its message; a file that cannot be read is"
    " reported, never stops the batch."
    "\n\n"
    f"Limits (docs/trace-format.md): {limits_text()}."
)


def _single(trace: str, engine: str, complete: bool, json_out: bool) -> int:
    """One trace: its verdict printed whole, exit code its code; a file that cannot be read is a
    usage error."""
    from model_checks.conformance import validate_file, validate_stream
    from model_checks.conformance.trace_schema import SchemaUnreadable

    try:
        if trace == "-":
            verdict = validate_stream(sys.stdin.buffer, engine=engine, complete=complete)
        else:
            verdict = validate_file(trace, engine=engine, complete=complete)
    except ValueError as problem:
        raise CommandError(_plain(str(problem), MESSAGE_CHARS)) from None
    except SchemaUnreadable as problem:  # the design's file, not the trace: never "cannot read TRACE"
        raise CommandError(_plain(str(problem), MESSAGE_CHARS)) from None
    except OSError as problem:
        why = _plain(problem.strerror or str(problem), 200)
        raise CommandError(f"cannot read {_plain(trace, 400)}: {why}") from None
    if json_out:
        sys.stdout.write(_json(verdict) + "\n")
    elif _coloured():
        from rich.console import Console

        render(verdict, Console(width=200))
    else:
        write_verdict(verdict, sys.stdout)
    return verdict.code


def register(app: typer.Typer) -> None:
    @app.command("validate", help=HELP)
    def validate_command(
        traces: Annotated[
            list[str],
            typer.Argument(
                metavar="TRACE",
                help="JSON Lines traces (docs/trace-format.md): files, folders (their *.jsonl) or glob"
                " patterns; - reads one trace from stdin",
                show_default=False,
            ),
        ],
        json_out: Annotated[
            bool,
            typer.Option(
                "--json", help="print the verdict as JSON (many traces: each verdict, then the summary)"
            ),
        ] = False,
        engine: Annotated[
            str, typer.Option(help=f"one of: {', '.join(ENGINES)} (spec: the generic search)")
        ] = "fast",
        complete: Annotated[
            bool,
            typer.Option(
                "--complete",
                help="the run that wrote the trace is over: judge it as a complete behaviour, not a prefix"
                " (work-lane traces show this with stop_end: one without it stays a prefix)",
            ),
        ] = False,
        jobs: Annotated[
            int | None,
            count(
                "processes validating many traces at once (default: the number of cores)",
                "--jobs",
                high=MAX_JOBS,
            ),
        ] = None,
    ) -> None:
        # Usage errors are CommandError: one line on stderr, or a JSON object on stdout with --json.
        if engine not in ENGINES:
            raise CommandError(
                f"unknown engine {_plain(engine, 80)}; known: {', '.join(ENGINES)}", "--engine"
            )
        if "-" in traces and len(traces) > 1:
            raise CommandError("- (a trace on stdin) is validated alone, not among other traces", "TRACE")
        if len(traces) == 1 and (traces[0] == "-" or Path(traces[0]).is_file()):
            raise typer.Exit(_single(traces[0], engine, complete, json_out))
        named = expand(traces)
        if all(entry.problem is not None for entry in named):  # nothing at all to validate
            first = named[0]
            raise CommandError(f"{first.problem}: {_plain(first.file, 400)}")
        judge_one = partial(judge, engine=engine, complete=complete, whole=json_out)
        raise typer.Exit(run_batch(named, judge_one, jobs or os.cpu_count() or 1, json_out))
