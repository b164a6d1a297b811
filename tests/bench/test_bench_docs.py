"""`lanecheck bench all --write FILE`: every bench rerun, each block of the document replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.bench.docs import DocumentError, Measured, block_names, render, update
from model_checks.cli import app
from model_checks.commands import bench as bench_command

DOC = """# Performance

Prose the author wrote, quoting a marker: `<!-- bench:NAME -->`.

<!-- bench:alpha -->
stale figures of alpha
<!-- /bench:alpha -->

Between the blocks.

<!-- bench:beta -->
stale figures of beta
<!-- /bench:beta -->
"""

MACHINE = {"load": [0.5, 0.7, 0.9], "cores": 2, "usable_cores": 2, "pinned": False}


def test_render_heads_the_figures_with_when_and_on_what_machine() -> None:
    m = Measured("alpha", {"items_per_s": 1234567.8, "ratio": 2.5, "nested": {"p50_us": 12}}, MACHINE, "T")
    text = render(m)
    assert (
        "`lanecheck bench alpha --json`, T: load 0.5 / 0.7 / 0.9 (1/5/15 min), 2 of 2 cores, not pinned"
        in text
    )
    assert "| items_per_s | 1,234,568 |" in text
    assert "| ratio | 2.5 |" in text
    assert "| nested.p50_us | 12 |" in text


def test_the_machine_line_names_the_reference_loop_when_it_was_timed() -> None:
    m = Measured("alpha", {"x": 1}, {**MACHINE, "reference_loop_ms": 71.5}, "T")
    assert "2 of 2 cores, not pinned, reference loop 71.5 ms, Python" in render(m)


def test_the_reference_loop_is_timed_in_milliseconds() -> None:
    from model_checks.bench.machine import context

    facts = context()
    assert 0 < facts["reference_loop_ms"] < 60_000 and facts["cores"] >= facts["usable_cores"] >= 1


def test_update_replaces_only_the_measured_blocks_and_keeps_the_prose() -> None:
    out = update(DOC, {"alpha": Measured("alpha", {"x": 1}, MACHINE, "T")})
    assert "stale figures of alpha" not in out
    assert "| x | 1 |" in out
    assert "stale figures of beta" in out  # not rerun: left as it was
    assert "Prose the author wrote, quoting a marker" in out and "Between the blocks." in out
    assert block_names(out) == ["alpha", "beta"]  # the markers survive, so the next run finds them
    assert update(out, {"alpha": Measured("alpha", {"x": 2}, MACHINE, "T")}).count("| x |") == 1


def test_a_measured_bench_without_a_block_is_refused_not_lost() -> None:
    with pytest.raises(DocumentError, match="no block for bench:gamma"):
        update(DOC, {"gamma": Measured("gamma", {"x": 1}, MACHINE, "T")})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("<!-- bench:a -->\nx\n", "line 1: block bench:a is never closed"),
        ("x\n<!-- /bench:a -->\n", "line 2: /bench:a closes no open block"),
        (
            "<!-- bench:a -->\n<!-- /bench:a -->\n<!-- bench:a -->\n<!-- /bench:a -->\n",
            "line 3: a second block",
        ),
    ],
)
def test_malformed_blocks_are_named_by_line(text: str, problem: str) -> None:
    with pytest.raises(DocumentError, match=problem):
        block_names(text)


@pytest.fixture
def two_benches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    ran: list[str] = []

    def fake_benches() -> dict[str, tuple[str, str]]:
        return {"alpha": ("m.alpha", "first"), "beta": ("m.beta", "second")}

    def fake_run(name: str, quick: bool, engine: str = "local", store: str | None = None) -> dict[str, Any]:
        ran.append(name)
        if name == "beta":
            raise RuntimeError("the bench broke")
        return {"figure": 42, "quick": quick}

    monkeypatch.setattr(bench_command, "benches", fake_benches)
    monkeypatch.setattr(bench_command, "run_bench", fake_run)
    return ran


def test_bench_all_writes_what_ran_and_fails_naming_the_bench_that_broke(
    tmp_path: Path, two_benches: list[str]
) -> None:
    doc = tmp_path / "perf.md"
    doc.write_text(DOC)
    result = CliRunner().invoke(app, ["bench", "all", "--quick", "--write", str(doc), "--json"])
    assert result.exit_code == 1, result.output
    assert two_benches == ["alpha", "beta"]  # the failure of one does not stop the rest
    text = doc.read_text()
    assert "| figure | 42 |" in text and "stale figures of alpha" not in text
    assert "stale figures of beta" in text
    assert "bench(es) failed: beta" in result.output
    out = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert out["benches"]["alpha"]["figures"] == {"figure": 42, "quick": True}
    assert out["failed"] == {"beta": "RuntimeError: the bench broke"}


@pytest.mark.parametrize(
    ("args", "problem"),
    [(["--only", "nope"], "nope: not a benchmark"), (["--skip", ","], "not a benchmark")],
)
def test_bench_all_refuses_unknown_names(args: list[str], problem: str, two_benches: list[str]) -> None:
    result = CliRunner().invoke(app, ["bench", "all", *args])
    assert result.exit_code == 2
    assert problem in result.output
    assert two_benches == []


def test_only_and_skip_choose_the_benches(tmp_path: Path, two_benches: list[str]) -> None:
    result = CliRunner().invoke(app, ["bench", "all", "--skip", "beta", "--json"])
    assert result.exit_code == 0, result.output
    assert two_benches == ["alpha"]


def test_no_design_may_take_the_name_all() -> None:
    assert "all" not in bench_command.benches()


def test_the_performance_document_has_a_block_for_every_bench() -> None:
    # so `lanecheck bench all --write docs/performance.md` leaves no documented figure stale
    text = (Path(__file__).parents[2] / "docs" / "performance.md").read_text()
    assert sorted(block_names(text)) == sorted(bench_command.benches())


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("<!-- bench:alpha -->\nnever closed\n", "never closed"),
        ("<!-- bench:alpha -->\nold\n<!-- /bench:alpha -->\n", "no block for bench:beta"),
    ],
    ids=["malformed", "no-block-for-a-chosen-bench"],
)
def test_bench_all_refuses_a_document_before_running_anything(
    document: str, problem: str, tmp_path: Path, two_benches: list[str]
) -> None:
    doc = tmp_path / "perf.md"
    doc.write_text(document)
    result = CliRunner().invoke(app, ["bench", "all", "--write", str(doc)])
    assert result.exit_code == 2
    assert problem in result.output
    assert two_benches == []  # refused before an hour of benchmarks, not after


def test_bench_all_writes_a_document_with_blocks_for_the_chosen_benches_only(
    tmp_path: Path, two_benches: list[str]
) -> None:
    doc = tmp_path / "perf.md"
    doc.write_text("<!-- bench:alpha -->\nold\n<!-- /bench:alpha -->\n")
    assert CliRunner().invoke(app, ["bench", "all", "--write", str(doc), "--only", "alpha"]).exit_code == 0
    assert "| figure | 42 |" in doc.read_text()
