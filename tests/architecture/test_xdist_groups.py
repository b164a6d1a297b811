"""The suite runs with ``--dist loadgroup`` (``.ci/run``, the README's test command) so that the
tests of one ``xdist_group`` run in one worker: the Ray tests share one local Ray
(``tests/ray/conftest.py``), and a module whose expensive fixture or memo serves all its tests
builds it once (``tests/ports/test_cpp_ports.py``, ``tests/conformance/test_link_spec_to_impl.py``).
pytest 9.2 stopped reading the attribute pytest-xdist 3.8 sets to form the groups, and they
silently did not form; this runs a small suite that way and checks that they do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = """
import os
import pytest

pytestmark = pytest.mark.xdist_group("together")


@pytest.mark.parametrize("i", range(8))
def test_grouped(i: int) -> None:
    out = os.environ["WORKERS_SEEN"]
    with open(os.path.join(out, f"grouped-{i}"), "w") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "none"))
"""

ALONE = """
import pytest


@pytest.mark.parametrize("i", range(8))
def test_alone(i: int) -> None:
    pass
"""


@pytest.mark.timeout(180)
def test_the_tests_of_one_xdist_group_run_in_one_worker(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_grouped.py").write_text(GROUPED)
    (suite / "test_alone.py").write_text(ALONE)
    (suite / "pytest.ini").write_text("[pytest]\n")  # this suite's own root: none of our options
    seen = tmp_path / "workers"
    seen.mkdir()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
    command += ["--dist", "loadgroup", f"--basetemp={tmp_path / 'base'}", str(suite)]
    env = {**os.environ, "WORKERS_SEEN": str(seen)}
    done = subprocess.run(
        command, cwd=suite, env=env, capture_output=True, text=True, timeout=150, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {p.name: p.read_text() for p in seen.iterdir()}
    assert len(workers) == 8, workers
    assert len(set(workers.values())) == 1, f"one group ran in several workers: {workers}"
    assert set(workers.values()) <= {"gw0", "gw1"}, workers
