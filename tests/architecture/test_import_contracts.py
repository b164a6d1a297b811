"""The one-way data flow is enforced by import-linter's contracts in pyproject.toml.

The contracts must hold on the tree, and they must be able to fail: a copy of the
tree with one deliberately wrong import is caught by the contract it breaks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spec", "reference", "model_checks")
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))

pytestmark = pytest.mark.skipif(
    not Path(LINT_IMPORTS).exists(), reason="import-linter is not installed (pip install -e '.[dev]')"
)


def run_lint(cwd: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    args = [LINT_IMPORTS, "--no-cache"]
    for contract in contracts:
        args += ["--contract", contract]
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def copy_tree(dest: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c")
        )
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")


@pytest.mark.timeout(180)
def test_the_tree_keeps_every_contract() -> None:
    result = run_lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("module", "wrong_import", "contract"),
    [
        ("spec/work_lane.py", "import model_checks.explorer.search", "spec-alone"),
        ("reference/scheduler.py", "import spec.work_lane", "reference-alone"),
        ("model_checks/explorer/outcome.py", "import model_checks.explorer.search", "no-cycles"),
    ],
)
def test_a_wrong_import_is_caught(tmp_path: Path, module: str, wrong_import: str, contract: str) -> None:
    copy_tree(tmp_path)
    assert run_lint(tmp_path, contract).returncode == 0
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{wrong_import}  # deliberately wrong\n")
    result = run_lint(tmp_path, contract)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
