"""Which code a unit of `lanecheck verify` depends on (``model_checks/certificate/deps.py``).

The rule is checked on a private tree of fake packages (``fake``), so that no one editing the
project meanwhile changes what a test sees; lanecheck's own files are read once per test
(``frozen_tree``). One test runs real units in a fresh process and checks that every module of
lanecheck they loaded is among their dependencies: a dependency missed would let a stale verdict
be reused.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_checks.certificate import deps, document, run
from model_checks.verify import Unit, units

FAKE = {
    "__init__.py": "",
    # the provider: a module-level import, one in a function, one named in a string
    "rows.py": """
        from lcfake_core import engine

        NAMED = ("lcfake_core.named:THING",)


        def rows(quick):
            from lcfake_core.lazy import helper
            return iter(())
        """,
    "engine.py": "import lcfake_core.util as u\n",
    "util.py": "X = 1\n",
    "lazy.py": "def helper():\n    return 1\n",
    "named.py": "THING = 1\n",
    "schema.json": "{}\n",
    "tla/Spec.tla": "---- MODULE Spec ----\n====\n",
    # code no unit runs, though it imports what units run
    "report/__init__.py": "from lcfake_core import engine\n",
    "serve/app.py": "from lcfake_core.report import engine\n",
    "commands.py": "from lcfake_core import rows\n",
}
UNIT = Unit("spec", "lanecheck", "design-free", "lcfake_core.rows:rows")


@pytest.fixture
def fake(tmp_path: Path, frozen_tree: None) -> Iterator[Path]:
    """The package ``lcfake_core`` in ``tmp_path``, importable (never imported: deps reads files)."""
    site = tmp_path / "fake_site"
    for name, text in FAKE.items():
        path = site / "lcfake_core" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(site))
    deps.forget()
    try:
        yield site / "lcfake_core"
    finally:
        sys.path.remove(str(site))
        deps.forget()


def test_a_unit_runs_its_provider_s_imports_in_functions_too_and_the_modules_it_names(fake: Path) -> None:
    reached = deps.closure(["lcfake_core.rows"])
    assert reached == {f"lcfake_core{m}" for m in ("", ".rows", ".engine", ".util", ".lazy", ".named")}
    files = deps.files_of(reached)
    assert {"lcfake_core/schema.json", "lcfake_core/tla/Spec.tla", "lcfake_core/lazy.py"} <= set(files)
    assert not [
        f for f in files if f.startswith(("lcfake_core/report", "lcfake_core/serve", "lcfake_core/c"))
    ]


def test_without_grimp_the_modules_are_parsed_here_with_the_same_result(
    fake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_grimp = deps.closure(["lcfake_core.rows"])
    monkeypatch.setitem(sys.modules, "grimp", None)  # import grimp now raises ImportError
    deps.forget()
    graph = deps.graph(frozenset({"lcfake_core"}))
    assert graph._grimp is None
    assert deps.closure(["lcfake_core.rows"]) == with_grimp


def _certificate_of(planned: list[run.Planned]) -> dict[str, object]:
    """A certificate of ``planned`` whose rows all got their verdict (as verify would write it)."""
    from model_checks.verify import VerifyRow

    tools = document.tools()
    row = VerifyRow("spec", "fake", "holds", "holds", "", 0.0)
    entries = [
        document.unit_entry(p.unit, p.deps, p.config, tools, [row], 0.0, document.now(), {}) for p in planned
    ]
    files: dict[str, str] = {}
    for p in planned:
        files.update(p.deps.files)
    return document.document({"quick": True, "areas": None, "designs": None}, entries, files, tools)


def _reused_after(edit: Path | None) -> bool:
    planned = run.prepare([UNIT], True, document.tools())
    previous = _certificate_of(planned)
    if edit is not None:
        edit.write_text(edit.read_text() + "\n# an edit\n")
    return 0 in run.reusable(run.prepare([UNIT], True, document.tools()), previous)


@pytest.mark.timeout(120)
def test_editing_what_a_unit_runs_invalidates_it_and_editing_report_or_serve_code_does_not(
    fake: Path,
) -> None:
    assert _reused_after(None)
    for unrelated in ("report/__init__.py", "serve/app.py", "commands.py"):
        assert _reused_after(fake / unrelated), unrelated
    for dependency in ("rows.py", "util.py", "lazy.py", "named.py", "schema.json", "tla/Spec.tla"):
        assert not _reused_after(fake / dependency), dependency


def test_a_design_depends_on_its_own_spec_reference_and_folder_not_another_s() -> None:
    [spec_unit, *_] = units(["spec"], ["work-lane"])
    files = deps.dependencies(spec_unit).files
    folder = "model_checks/designs/work_lane"
    for f in ("spec/work_lane.py", "reference/scheduler.py", f"{folder}/trace/trace-schema.json",
              f"{folder}/spec_mutants.py", "model_checks/harness/core.py", "model_checks/explorer/check.py",
              "model_checks/verify.py", "model_checks/designs/akka_mailbox/__init__.py"):  # fmt: skip
        assert f in files, f
    assert not [
        f for f in files if f.startswith("model_checks/designs/akka_mailbox/") and "__init__" not in f
    ]
    assert "spec/akka_mailbox.py" not in files  # imported in a function of akka's folder, not when loaded
    generic_not_run = ("model_checks/report/", "model_checks/serve/", "model_checks/commands/",
                       "model_checks/certificate/", "model_checks/bench/", "model_checks/cli.py")  # fmt: skip
    assert not [f for f in files if f.startswith(generic_not_run)]
    assert not [f for f in files if "/." in f or f.endswith((".pyc", ".so"))]


def test_strings_naming_modules_are_found_and_imports_on_import_leave_functions_out(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        'X = "model_checks.designs.work_lane.configs:CONFIGS"\nY = "not a module"\nZ = "spec.memory"\n'
    )
    assert deps._strings_in(source, 0) == {"model_checks.designs.work_lane.configs", "spec.memory"}
    on_import = deps.imported_on_import("model_checks.designs.akka_mailbox")
    assert "model_checks.design" in on_import and "spec.akka_mailbox" not in on_import
    assert "spec.akka_mailbox" in deps.imported_on_import(
        "model_checks.designs.akka_mailbox", everywhere=True
    )


LOADED = """
import json, sys
from model_checks.verify import Unit, run_unit
unit = Unit(*json.loads(sys.argv[1]))
rows = run_unit(unit, True)
assert rows and all(r.ok for r in rows), rows
tops = ("model_checks", "spec", "reference")
loaded = [n for n, m in sys.modules.items() if n.split(".")[0] in tops and getattr(m, "__file__", None)]
print(json.dumps(sorted(loaded)))
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "unit",
    [
        Unit("spec", "job-pool", "per-design", "model_checks.explorer.verify_rows:rows", "spec"),
        Unit(
            "spec",
            "event-pool",
            "per-design",
            "model_checks.explorer.verify_rows:rows",
            "--variant wait-after-done",
        ),
        Unit("harness", "event-pool", "per-design", "model_checks.harness.design_rows:rows", "two-threads"),
        Unit("conformance", "event-pool", "design-own", "model_checks.designs.event_pool.rows:rows"),
    ],
    ids=lambda u: u.key,
)
def test_every_module_a_unit_loads_when_it_runs_is_a_dependency(unit: Unit) -> None:
    if unit.part is not None:
        assert unit in units(None, [unit.covers]), "the unit is no longer in the plan"
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            LOADED,
            json.dumps([unit.area, unit.covers, unit.kind, unit.target, unit.part]),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=280,
    )
    loaded = json.loads(found.stdout.splitlines()[-1])
    files = deps.dependencies(unit).files
    missed = [
        m
        for m in loaded
        if (p := deps.path_of(m)) is not None and deps.key_of(p, m.split(".")[0]) not in files
    ]
    assert not missed, f"loaded by {unit.key} but not among its dependencies: {missed}"
