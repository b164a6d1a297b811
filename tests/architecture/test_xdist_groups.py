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
    worker = os.environ.get("PYTEST_XDIST_WORKER", "none")
    open(os.path.join(os.environ["WORKERS_SEEN"], f"{i}-{worker}"), "w").close()
"""

ALONE = """
import pytest


@pytest.mark.parametrize("i", range(8))
def test_alone(i: int) -> None:
    pass
"""


def workers_of_the_group(tmp_path: Path, dist: str) -> dict[str, set[str]]:
    """Run the small suite with ``-n 2 --dist DIST``: each grouped test and the workers it ran in."""
    suite = tmp_path / dist / "suite"
    suite.mkdir(parents=True)
    (suite / "test_grouped.py").write_text(GROUPED)
    (suite / "test_alone.py").write_text(ALONE)
    (suite / "pytest.ini").write_text("[pytest]\n")  # this suite's own root: none of our options
    seen = tmp_path / dist / "workers"
    seen.mkdir()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
    command += ["--dist", dist, f"--basetemp={tmp_path / dist / 'base'}", str(suite)]
    env = {**os.environ, "WORKERS_SEEN": str(seen)}
    done = subprocess.run(
        command, cwd=suite, env=env, capture_output=True, text=True, timeout=150, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran: dict[str, set[str]] = {}
    for p in seen.iterdir():
        test, worker = p.name.split("-")
        ran.setdefault(test, set()).add(worker)
    return ran


@pytest.mark.timeout(300)
def test_the_tests_of_one_xdist_group_run_in_one_worker(tmp_path: Path) -> None:
    ran = workers_of_the_group(tmp_path, "loadgroup")
    assert len(ran) == 8, ran
    workers = set().union(*ran.values())
    assert len(workers) == 1 and workers <= {"gw0", "gw1"}, f"one group ran in several workers: {ran}"
    # What a split looks like to this check: with ``--dist each`` every test runs in both workers.
    split = set().union(*workers_of_the_group(tmp_path, "each").values())
    assert split == {"gw0", "gw1"}, split
