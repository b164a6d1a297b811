# ruff: noqa: E501 - one case per line reads as the table it prints
"""The probe's CLI cases: bad numbers, names, output paths and ``--json`` usage errors exit 2 with one
line naming the problem; exports validate; what must work exits as it should."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fuzz.probe_bad_input.sandbox import Case, Outcome


def cli(
    args: list[str],
    expect: str | set[int] = "error",
    stdin: bytes | None = None,
    check: Callable[[Any], Outcome | None] | None = None,
) -> Callable[[], Outcome]:
    """Run ``lanecheck ARGS``; ``expect`` is "error" (exit 2, named) or the exit codes of a right answer."""

    def run() -> Outcome:
        import warnings

        from typer.testing import CliRunner

        from model_checks.cli import app

        warnings.simplefilter("ignore")
        result = CliRunner().invoke(app, args, input=stdin)
        out = (result.stdout or "") + (result.stderr if result.stderr_bytes is not None else "")
        exc = result.exception
        if exc is not None and not isinstance(exc, SystemExit):
            if isinstance(exc, MemoryError):
                return "RUNAWAY", "MemoryError"
            return "TRACEBACK", f"{type(exc).__name__}: {exc}"[:200]
        if "Traceback" in out or "internal error" in out:
            return "TRACEBACK", out.strip().splitlines()[-1][:200]
        if "out of memory" in out:
            return "RUNAWAY", out.strip()[:200]
        end = args.index("--") if "--" in args else len(args)
        if check is not None:
            custom = check(result)
            if custom is not None:
                return custom
        if expect == "error":
            if result.exit_code != 2:
                return "SILENTLY WRONG", f"exit {result.exit_code}: {out.strip()[:150]!r}"
            if "--json" in args[:end] and "--help" not in args[:end]:
                last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
                try:
                    doc = json.loads(last)
                    assert isinstance(doc, dict) and (
                        "error" in doc or doc.get("code") == 2 or "verdict" in doc
                    )
                except Exception:
                    return "SILENTLY WRONG", f"--json usage error not JSON on stdout: {out.strip()[:150]!r}"
            if not out.strip():
                return "SILENTLY WRONG", "exit 2 with no message"
            return "named error", out.strip().splitlines()[-1][:120]
        assert isinstance(expect, set)
        if result.exit_code in expect:
            return "right answer", f"exit {result.exit_code}"
        return "SILENTLY WRONG", f"exit {result.exit_code}, expected {sorted(expect)}: {out.strip()[-150:]!r}"

    return run


def cli_cases(root: Path) -> list[Case]:
    cases: list[Case] = []
    (root / "file").write_text("x\n")
    (root / "dir").mkdir()
    (root / "full").mkdir()
    (root / "full" / "keep.txt").write_text("keep")
    ro = root / "readonly"
    ro.mkdir()
    ro.chmod(0o500)
    missing = str(root / "missing" / "deeper" / "out")
    under = str(root / "file" / "sub")
    paths = {
        "dir": str(root / "dir"),
        "missing-parent": missing,
        "under-file": under,
        "readonly": str(ro / "x"),
        "empty": "",
    }
    if os.geteuid() == 0:  # root writes anywhere: a read-only folder refuses nothing
        del paths["readonly"]

    ints = [
        "-1",
        "0",
        "1.5",
        "nan",
        "inf",
        "-inf",
        "1e400",
        str(2**70),
        "0x10",
        "True",
        "",
        " ",
        "١",
        "99999999999999999999",
    ]
    numeric = {
        ("check", "work-lane"): ["--max-states", "--max-depth", "--workers"],
        ("explore", "counter-locked"): ["--preemption-bound", "--max-executions", "--max-steps", "--seed"],
        ("link", "compare", "1x1-2w"): ["--max-executions", "--show", "--seed", "--pct-depth"],
        ("link", "mbt"): [
            "--examples",
            "--steps",
            "--lanes",
            "--workers",
            "--producers",
            "--capacity",
            "--budget",
        ],
    }
    for head, options in numeric.items():
        for option in options:
            for value in ints:
                if option in ("--max-depth", "--show", "--preemption-bound", "--seed") and value == "0":
                    continue
                cases.append((f"cli {' '.join(head)} {option} {value!r}", cli([*head, option, value])))
    for head in (("check", "work-lane"), ("explore", "counter-locked"), ("link", "compare", "1x1-2w")):
        for value in ["-1", "nan", "inf", "1e400", "abc", "604801"]:
            cases.append(
                (f"cli {' '.join(head)} --time-limit {value!r}", cli([*head, "--time-limit", value]))
            )
    cases.append(("cli check --workers 300", cli(["check", "work-lane", "--workers", "300"])))
    # names
    for args in [
        ["check", "bogus"], ["check", "work-lane", "-c", "bogus"], ["check", "work-lane", "--variant", "bogus"],
        ["check", "work-stealing", "-c", "bogus"], ["check", "event-pool", "-c", "bogus"], ["check", ""], ["check", "\ud800"],
        ["diagram", "bogus"], ["diagram", "work-lane", "--component", "bogus"], ["diagram", "work-lane", "-c", "bogus"],
        ["diagram", "work-stealing", "--component", "bogus"], ["diagram", "event-pool", "-c", "nope"],
        ["explore", "bogus"], ["explore", "counter-locked", "--strategy", "bogus"], ["explore", "counter-locked", "--backend", "bogus"],
        ["explore", "work-lane/bogus"], ["explore", ""], ["explore", "/"],
        ["explore", "counter-locked", "--replay", "garbage"], ["explore", "counter-locked", "--replay", "lc1.0000.000000.0*99999999999"],
        ["explore", "counter-locked", "--replay", "lc1." + "9" * 5000], ["explore", "counter-locked", "--replay", ""],
        ["verify", "--area", "bogus"], ["verify", "--design", "bogus"], ["verify", "--area", ""],
        ["traces", "export", str(root / "t-bogus"), "--design", "bogus"], ["traces", "export", str(root / "t-c"), "-c", "bogus"],
        ["link", "compare", "bogus"], ["link", "compare", "1x1-2w", "--observe", "bogus"], ["link", "compare", "1x1-2w", "--observe", ""],
        ["link", "compare", "1x1-2w", "--observe", ",,,"], ["link", "compare", "1x1-2w", "--strategy", "bogus", "--automaton"],
        ["link", "compare", "--custom", "lanes=1000000000"], ["link", "compare", "--custom", "bogus"], ["link", "compare", "--custom", ""],
        ["link", "compare", "--custom", "lanes=2,script=0*99999999999"], ["link", "compare", "--custom", "lanes=1,workers=0,capacity=1,budget=1,script=0"],
        ["link", "compare", "--custom", "lanes=1,workers=1,capacity=1,budget=1,script=" + "0" * 100000],
        ["link", "compare", "--custom", "lanes=1,lanes=2,script=0"], ["link", "compare", "--custom", "lanes=٣,script=0"],
        ["link", "compare", "--custom", "lanes=1,workers=1,capacity=1,budget=1,script=0,stops=bogus"],
        ["link", "compare"],
        ["link", "mbt", "--mutant", "bogus"], ["link", "bogus"], ["bench", "bogus"], ["bogus"],
        ["check", "work-lane", "--bogus"], ["validate"], ["traces", "export"],
    ]:  # fmt: skip
        cases.append((f"cli {' '.join(a[:60] for a in args)}"[:90], cli(args)))
    # --json with usage errors: the error must be JSON on stdout
    for args in [
        ["check", "bogus", "--json"], ["check", "work-lane", "--max-states", "-5", "--json"], ["explore", "counter-locked", "--strategy", "x", "--json"],
        ["validate", str(root / "nope.jsonl"), "--json"], ["validate", str(root / "dir"), "--json"], ["validate", "-", "--json", "--engine", "bogus"],
        ["verify", "--area", "bogus", "--json"], ["link", "compare", "bogus", "--json"], ["link", "compare", "1x1-2w", "--observe", "bogus", "--json"],
        ["bench", "scheduler", "--json", "--bogus"], ["check", "work-lane", "--json", "--mermaid", paths["dir"]],
        ["explore", "--json"], ["link", "compare", "--json"],
    ]:  # fmt: skip
        cases.append((f"cli --json {' '.join(args)}"[:90], cli(args)))
    # output paths
    for option in ("--mermaid", "--counterexample"):
        for label, path in paths.items():
            cases.append((f"cli check {option} {label}", cli(["check", "work-lane", option, path])))
    for label, path in [
        ("file", str(root / "file")), ("under-file", under), ("readonly", str(ro / "sub")), ("empty", ""), ("blank", "  "),
        ("non-empty dir", str(root / "full")),
    ]:  # fmt: skip
        if label == "readonly" and os.geteuid() == 0:
            continue
        cases.append((f"cli traces export DIR={label}", cli(["traces", "export", path])))
    cases.append(("cli traces export /proc/x", cli(["traces", "export", "/proc/lanecheck-probe"])))

    # exported traces must validate, for every design that has a trace format
    def export_then_validate(design: str) -> Callable[[], Outcome]:
        def run() -> Outcome:
            from model_checks.conformance import validate_file

            target = Path(tempfile.mkdtemp(dir=root)) / design
            got = cli(["traces", "export", str(target), "--design", design], {0, 2})()
            if got[0] != "right answer":
                return got
            files = sorted(target.glob("*.jsonl")) if target.is_dir() else []
            if "exit 2" in got[1]:
                return ("named error", got[1]) if not files else ("SILENTLY WRONG", "refused but left files")
            complete = design != "work-lane"  # work-lane traces end with stop_end instead
            bad = [f.name for f in files if validate_file(f, complete=complete).code != 0]
            if not files or bad:
                return "SILENTLY WRONG", f"{len(files)} written, not valid: {bad[:3]}"
            header = json.loads(files[0].read_text().splitlines()[0])
            if header.get("design", "work-lane") != design:
                return "SILENTLY WRONG", f"header design {header.get('design')!r} for {design}"
            return "right answer", f"{len(files)} files, each validates"

        return run

    # work-stealing and event-pool refused an export until their trace formats came
    for design in ("work-lane", "schedule-gate", "akka-mailbox", "work-stealing", "event-pool"):
        cases.append((f"cli traces export --design {design} validates", export_then_validate(design)))

    def export_twice() -> Outcome:
        target = Path(tempfile.mkdtemp(dir=root)) / "twice"
        first = cli(["traces", "export", str(target)], {0})()
        if first[0] != "right answer":
            return first
        return cli(["traces", "export", str(target)])()

    cases.append(("cli traces export into its own earlier export", export_twice))
    # things that must work
    cases.append(("cli explore --list", cli(["explore", "--list"], {0})))
    # a long replay of a short program: the program ends, the rest of the replay is never read
    cases.append(
        (
            "cli explore replay 20 x 0*99999999",
            cli(
                ["explore", "counter-locked", "--replay", "lc1.0000.000000." + ",".join(["0*99999999"] * 20)],
                {0, 1, 2},
            ),
        )
    )
    cases.append(
        (
            "cli link compare named + --custom",
            cli(["link", "compare", "1x1-2w", "--custom", "lanes=1,script=0"], {0}),
        )
    )
    cases.append(("cli link compare --list", cli(["link", "compare", "--list"], {0})))
    cases.append(("cli check --help unicode", cli(["check", "--help"], {0})))
    cases.append(
        (
            "cli explore counter-locked --max-steps 1",
            cli(
                ["explore", "counter-locked", "--max-steps", "1", "--max-executions", "3"],
                {0, 1, 3},
                check=lambda r: (
                    ("SILENTLY WRONG", "livelock reported for a correct program with a tiny step bound")
                    if "livelock" in r.output.lower() and "raise max_steps" not in r.output
                    else None
                ),
            ),
        )
    )
    cases.append(
        (
            "cli explore counter-locked --replay huge repeat",
            cli(["explore", "counter-locked", "--replay", "lc1.0000.000000.0*1000000000000000"]),
        )
    )
    return cases
