"""The C++ port kit (ports/cpp/): build the example ports with g++, stress them, validate every trace.

Each example binary runs many stressed runs (3 posting threads, 2 concurrent Stops, a Stop from a
callback now and then) and prints one JSON report per run, from the program's own bookkeeping.
The correct ports must give only allowed, complete traces; each seeded-bug copy must be rejected,
naming the rule, in every run whose report shows the bug took effect, and must show it in some.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance import Verdict, validate_file

PORTS = Path(__file__).resolve().parents[2] / "ports" / "cpp"
EXAMPLES = PORTS / "examples"
GXX = shutil.which("g++")
FLAGS = ["-O2", "-std=c++17", "-pthread", "-Wall", "-Wextra", "-Werror"]
RUNS = 30
MAX_BATCHES = 4  # a bug copy gets up to 4 × RUNS runs to show its bug

pytestmark = [
    pytest.mark.skipif(
        GXX is None, reason="no C++ compiler: g++ is not on PATH, the C++ port kit cannot be built"
    ),
    pytest.mark.timeout(240),
    # One xdist worker for the module: its binaries (a module fixture, ~20-40 s of g++) are built once.
    pytest.mark.xdist_group("cpp-ports"),
]

DESIGNS = {"locked": "work_lane_locked.cpp", "lockfree": "work_lane_lockfree.cpp"}
BUGS = ("none", "lost_wakeup", "drop_on_stop")


def _compile(source: Path, out: Path, extra: list[str]) -> subprocess.Popen[bytes]:
    assert GXX is not None
    return subprocess.Popen(
        [GXX, *FLAGS, *extra, str(source), "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.fixture(scope="module")
def binaries(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Every (design, bug) build, compiled in parallel."""
    out = tmp_path_factory.mktemp("cpp-ports")
    jobs = {}
    for design, source in DESIGNS.items():
        for bug in BUGS:
            binary = out / f"{design}-{bug}"
            jobs[(design, bug)] = (binary, _compile(EXAMPLES / source, binary, [f"-DLANECHECK_BUG={bug}"]))
    built = {}
    for key, (binary, proc) in jobs.items():
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, f"g++ failed for {key}:\n{err.decode(errors='replace')}"
        built[key] = binary
    return built


def run_port(binary: Path, out: Path, runs: int, seed: int, modes: str = "mixed") -> list[dict[str, Any]]:
    """Run ``runs`` stressed runs; one report per run (trace path and the program's counts)."""
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [str(binary), str(out), str(runs), str(seed), modes], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, (
        f"{binary.name} exited {done.returncode}: {done.stderr.decode(errors='replace')}"
    )
    reports = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(reports) == runs
    return reports


def judge(trace: str) -> Verdict:
    """The verdict of the real validator, as `lanecheck validate` gives it (the header's design
    picks the format: work-lane v1 or work-lane-lockfree v2)."""
    return validate_file(trace)


def validate_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`lanecheck validate` itself, as a port team runs it."""
    command = [sys.executable, "-m", "model_checks", "validate", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_correct_port_gives_only_allowed_complete_traces(
    design: str, binaries: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    reports = run_port(binaries[(design, "none")], tmp_path, RUNS, seed=11)
    for report in reports:
        assert (report["dropped"], report["duplicated"], report["stranded"]) == (0, 0, 0), report
        verdict = judge(report["trace"])
        assert verdict.allowed and not verdict.prefix, f"{report['trace']}: {verdict.message}"
    # The same folder through `lanecheck validate`, as a port team runs it.
    cli = validate_cli(str(tmp_path), "--jobs", "1")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    # Both Stop modes were exercised, and items were both invoked and discarded.
    assert {r["stop_mode"] for r in reports} == {"drain", "discard"}
    assert sum(r["discarded"] for r in reports) > 0
    assert sum(r["invoked"] for r in reports) > 0


def test_tracer_escapes_labels_into_strict_json(
    binaries: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    """Quotes, backslash, control characters, non-ASCII and an invalid UTF-8 byte in item labels."""
    reports = run_port(binaries[("locked", "none")], tmp_path, 3, seed=5, modes="drain")
    labels = set()
    for report in reports:
        lines = Path(report["trace"]).read_bytes().decode("utf-8").splitlines()  # strict UTF-8
        labels |= {json.loads(line).get("item") for line in lines[1:]}
    suffixes = {re.fullmatch(r"p\d+-\d+(.*)", label, re.DOTALL).group(1) for label in labels if label}  # type: ignore[union-attr]
    assert suffixes == {"", '"q"', "\\", "é", "\t\n", "\x01", "\ufffd"}


def exhibited(bug: str, report: dict[str, Any]) -> bool:
    """Whether the seeded bug took effect in this run, by the program's own count."""
    return bool(report["lost_wakeups"] if bug == "lost_wakeup" else report["dropped"])


# The rule a rejection must name. A lock-free Stop that does not wait may also be caught at a
# push that came after it took effect (rule 6 names pushes) or at its stop_begin (rule 7).
RULES = {
    ("locked", "lost_wakeup"): {5},
    ("lockfree", "lost_wakeup"): {5},
    ("locked", "drop_on_stop"): {7},
    ("lockfree", "drop_on_stop"): {6, 7},
}


@pytest.mark.parametrize(("design", "bug"), sorted(RULES))
def test_bug_copy_is_rejected_in_every_run_that_shows_it(
    design: str, bug: str, binaries: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    modes = "drain" if bug == "drop_on_stop" else "mixed"  # the drop bug is Stop(drain)'s
    reports: list[dict[str, Any]] = []
    for batch in range(MAX_BATCHES):
        reports += run_port(
            binaries[(design, bug)], tmp_path / str(batch), RUNS, seed=101 + batch, modes=modes
        )
        if any(exhibited(bug, r) for r in reports):
            break
    shown = [r for r in reports if exhibited(bug, r)]
    assert shown, f"{design}/{bug}: the bug never took effect in {len(reports)} runs"
    rejected = 0
    for report in reports:
        verdict = judge(report["trace"])
        if exhibited(bug, report):
            assert verdict.code == 1, f"{report['trace']} shows the bug but was judged: {verdict.message}"
            assert verdict.rule in RULES[(design, bug)], (
                f"{report['trace']}: rule {verdict.rule}: {verdict.message}"
            )
            assert verdict.rule_text(), verdict.message
        elif bug == "lost_wakeup":
            # The stale decision happened to be right: the trace is a correct port's.
            assert verdict.allowed, f"{report['trace']}: {verdict.message}"
        rejected += not verdict.allowed
    cli = validate_cli(*(r["trace"] for r in shown), "--jobs", "1")
    assert cli.returncode == 1, cli.stdout + cli.stderr
    print(f"{design}/{bug}: shown in {len(shown)}/{len(reports)} runs, rejected {rejected}/{len(reports)}")


def test_null_tracer_has_the_tracers_interface(tmp_path: Path) -> None:
    """A scheduler written against the tracer interface builds with the NullTracer (tracing off)."""
    source = tmp_path / "null.cpp"
    source.write_text(
        '#include "lanecheck_trace.hpp"\n'
        "template <class Tr> int step(Tr& tr) {\n"
        '  auto& log = tr.thread("w0");\n'
        "  return tr.step([&] {\n"
        '    log.emit("cas", [&](lanecheck::Fields& f) { f.num("lane", 0).flag("ok", true).null("saw"); });\n'
        "    return 1; });\n"
        "}\n"
        "static_assert(!lanecheck::NullTracer::enabled && lanecheck::TraceFile::enabled);\n"
        'int main() { lanecheck::NullTracer n; lanecheck::TraceFile t("/dev/null", "{}"); '
        "return step(n) + step(t) == 2 ? 0 : 1; }\n"
    )
    assert GXX is not None
    done = subprocess.run(
        [GXX, *FLAGS, f"-I{PORTS}", "-fsyntax-only", str(source)],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")


@pytest.mark.soak  # a ThreadSanitizer build and run: outside the suite (-m soak)
def test_lockfree_port_under_thread_sanitizer(tmp_path: Path) -> None:
    binary = tmp_path / "lockfree-tsan"
    proc = _compile(EXAMPLES / DESIGNS["lockfree"], binary, ["-fsanitize=thread", "-g", "-O1"])
    _, err = proc.communicate(timeout=180)
    if proc.returncode != 0:
        pytest.skip(f"this g++ cannot build with -fsanitize=thread: {err.decode(errors='replace')[:300]}")
    tmp_path.joinpath("t").mkdir()
    done = subprocess.run(
        [str(binary), str(tmp_path / "t"), "5", "3"], capture_output=True, timeout=120, check=False
    )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0 and "ThreadSanitizer" not in stderr, stderr[:3000]
    for line in done.stdout.decode().splitlines():
        assert judge(json.loads(line)["trace"]).allowed
