"""`lanecheck verify --certificate FILE` and `lanecheck certificate check FILE`.

The handoff plug-in design is installed from a copy in a temporary folder (``conftest.py``), so
that a test can change its code and see the certificate notice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.certificate import deps, document, run
from model_checks.cli import app
from model_checks.commands.verify import collect
from model_checks.verify import VerifyRow, units

# every test reads lanecheck's own files once (``frozen_tree``): others may be editing them
pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("frozen_tree")]
runner = CliRunner()


def keys(rows: list[VerifyRow]) -> list[tuple[str, str, str, str]]:
    return [(r.area, r.subject, r.expected, r.actual) for r in rows]


def certify(path: Path, designs: list[str], fresh: bool = False) -> list[VerifyRow]:
    return collect(True, None, None, designs, jobs=1, certificate=path, fresh=fresh)


def boom(*args: Any, **kwargs: Any) -> Iterator[VerifyRow]:
    raise RuntimeError("a provider ran although its rows were to be reused")


def no_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("model_checks.explorer.verify_rows.rows", boom)
    monkeypatch.setattr("model_checks.harness.design_rows.rows", boom)


def check(*args: str) -> Any:
    return runner.invoke(app, ["certificate", "check", *args])


def test_a_certificate_holds_every_row_with_its_code_configuration_counts_and_tools(
    handoff: Path, tmp_path: Path
) -> None:
    cert = tmp_path / "run.json"
    rows = certify(cert, ["handoff"])
    doc = document.read(cert)
    assert [r["subject"] for u in doc["units"] for r in u["rows"]] == [r.subject for r in rows]
    assert len(rows) == 4 and all(r.ok for r in rows)
    spec_unit, mutant_unit = doc["units"][:2]  # the spec step, cut: the spec row, then each mutant
    assert spec_unit["part"] == "spec" and mutant_unit["part"] == "--variant check-then-wait"
    assert spec_unit["configuration"]["configuration"] == "small"
    assert spec_unit["configuration"]["mutants"] == []
    assert mutant_unit["configuration"]["mutants"][0]["name"] == "check-then-wait"
    assert spec_unit["rows"][0]["counts"]["states"] > 0
    for f in ("lanecheck_handoff/spec.py", "lanecheck_handoff/reference.py", "model_checks/explorer/check.py",
              "spec/language.py", "model_checks/verify.py"):  # fmt: skip
        assert f in spec_unit["files"], f
        assert doc["files"][f] == deps.current_hash(f)
    scenario_units = [u for u in doc["units"] if u["area"] == "harness"]
    assert {u["part"] for u in scenario_units} == {"producer-consumer", "check-then-wait"}
    assert doc["tools"]["python"] and doc["tools"]["libraries"]["greenlet"] and doc["machine"]["cpus"]
    result = check(str(cert), "--sample", "2", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert "4 of 4 units: code matches" in result.output and "same:" in result.output


def test_unchanged_rows_are_reused_and_fresh_runs_them_again(
    handoff: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert = tmp_path / "run.json"
    first = certify(cert, ["handoff"])
    stamp = document.read(cert)["units"][0]["computed"]
    no_providers(monkeypatch)
    again = certify(cert, ["handoff"])
    assert keys(again) == keys(first)
    assert all(r.reused_from == stamp for r in again)
    assert [r.seconds for r in again] == [r.seconds for r in first]  # a row's seconds stay its own
    with pytest.raises(RuntimeError, match="provider ran"):
        certify(cert, ["handoff"], fresh=True)


def test_a_changed_file_is_named_and_only_the_units_depending_on_it_run_again(
    handoff: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a module of the plug-in that only its rows run: imported in a function of its spec (what the
    # registry imports when it loads the plug-in counts for every design's rows)
    (handoff / "notes.py").write_text("NOTE = 1\n")
    spec = handoff / "spec.py"
    spec.write_text(
        spec.read_text() + "\n\ndef _notes() -> int:\n    from .notes import NOTE\n\n    return NOTE\n"
    )
    cert = tmp_path / "run.json"
    certify(cert, ["handoff", "job-pool"])
    job_pool = len(units(None, ["job-pool"]))
    notes = handoff / "notes.py"
    notes.write_text(notes.read_text() + "\n# an edit\n")
    result = check(str(cert), "--sample", "0")
    assert result.exit_code == 1, result.output
    assert "lanecheck_handoff/notes.py" in result.output and "CHANGED spec | handoff" in result.output
    assert f"{job_pool} of {job_pool + 4} units: code matches" in result.output  # job-pool's
    # verify reuses job-pool's units and runs the handoff's again
    rows = certify(cert, ["handoff", "job-pool"])
    assert {r.subject.split()[0] for r in rows if r.reused_from} == {"job-pool"}
    assert all(r.reused_from is None for r in rows if "handoff" in r.subject)
    assert check(str(cert), "--sample", "0").exit_code == 0


def test_a_tampered_hash_in_the_certificate_is_named(handoff: Path, tmp_path: Path) -> None:
    cert = tmp_path / "run.json"
    certify(cert, ["handoff"])
    doc = json.loads(cert.read_text())
    doc["files"]["lanecheck_handoff/spec.py"] = "0" * 64
    cert.write_text(json.dumps(doc))
    result = check(str(cert), "--sample", "0")
    assert result.exit_code == 1 and "lanecheck_handoff/spec.py: sha256" in result.output, result.output
    # ... and verify does not reuse what it cannot match
    assert not any(r.reused_from for r in certify(cert, ["handoff"]) if "[small]" in r.subject)


def test_a_verdict_that_differs_on_re_running_fails_the_check(
    handoff: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert = tmp_path / "run.json"
    certify(cert, ["handoff"])

    def wrong(quick: bool, designs: Any, only: str | None = None) -> Iterator[VerifyRow]:
        yield VerifyRow("spec", "handoff [small]", "holds", "violated", "", 0.0)
        yield VerifyRow("spec-mutant", "handoff --variant check-then-wait", "caught", "missed", "", 0.0)

    monkeypatch.setattr("model_checks.explorer.verify_rows.rows", wrong)
    result = check(str(cert), "--sample", "4", "--seed", "0")
    assert result.exit_code == 1, result.output
    assert "DIFFERS: handoff [small]: certificate holds, now violated" in result.output


def test_a_unit_whose_design_module_is_not_found_is_never_reused(
    handoff: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert = tmp_path / "run.json"
    certify(cert, ["handoff"])
    previous = document.read(cert)
    # the plug-in's entry point hidden from the dependency finder (the registry has loaded it)
    monkeypatch.setattr(deps, "entry_points", lambda group: [])
    planned = run.prepare(units(None, ["handoff"]), True, document.tools())
    assert not any(p.deps.complete for p in planned) and run.reusable(planned, previous) == {}


# --------------------------------------------------------------------------- bad input


def test_a_file_that_is_not_a_certificate_is_refused_naming_the_problem(
    handoff: Path, tmp_path: Path
) -> None:
    cert = tmp_path / "run.json"
    certify(cert, ["handoff"])
    good = json.loads(cert.read_text())
    cases: list[tuple[str, str]] = [
        ("{not json", "not JSON: line 1"),
        (json.dumps({"rows": []}), "not a certificate"),
        (json.dumps({**good, "version": 99}), "version '99' is unknown"),
        (json.dumps({**good, "units": [{**good["units"][0], "rows": [{"area": 5}]}]}), "units/0/rows/0"),
        (json.dumps({**good, "files": {}}), "has no hash in the files table"),
    ]
    for text, words in cases:
        cert.write_text(text)
        result = check(str(cert))
        assert result.exit_code == 2, (text[:40], result.output)
        assert words in result.output and str(cert) in result.output, (words, result.output)
        refused = runner.invoke(app, ["verify", "--quick", "--design", "handoff", "--certificate", str(cert)])
        assert refused.exit_code == 2 and words in refused.output, refused.output
    missing = check(str(tmp_path / "none.json"))
    assert missing.exit_code == 2 and "no such file" in missing.output


def test_fresh_needs_a_certificate_and_jobs_is_range_checked() -> None:
    result = runner.invoke(app, ["verify", "--quick", "--fresh"])
    assert result.exit_code == 2 and "--certificate" in result.output
    assert runner.invoke(app, ["verify", "--quick", "--jobs", "0"]).exit_code == 2


def test_report_writes_the_site_of_the_rows(
    handoff: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # model_checks.report.write_site is being written elsewhere: a stand-in records the call
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("model_checks.report.write_site", lambda **kw: calls.append(kw), raising=False)
    out = tmp_path / "site"
    result = runner.invoke(
        app, ["verify", "--quick", "--design", "handoff", "--jobs", "1", "--report", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    [call] = calls
    assert call["out"] == out and call["design_names"] == ["handoff"]
    assert [r.subject for r in call["rows"]] == [r["subject"] for r in json.loads(result.output)["rows"]]
