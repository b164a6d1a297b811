"""The program's modules outside its folder (``PYTHONPATH``, a ``src/`` layout, an editable
install) are patched with it (``patch_modules``): session 38's review found them traced but not
patched. Their locks made at import stayed real (a correctly locked counter was a data race),
their globals were not restored (``--no-races``: ``AssertionError: 6``), and a sleep under their
real lock hung the check past its time limit. The in-process cases are catalogued
(tests/harness/outside_programs.py); these run `lanecheck explore` as a user does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from model_checks.harness import patch_modules
from tests.harness import outside_programs
from tests.harness.explore_runs import REPO, explore_command
from tests.harness.outside_lib import counting, deeper, registry

LOCKED = """\
import threading, time
_lock = threading.Lock()
total = 0
def slow_bump():
    global total
    with _lock:
        v = total
        time.sleep(0.001)  # under the lock: the other thread waits (it hung on the real lock)
        total = v + 1
"""

PROGRAM = """\
import threading
{import_line}
def main():
    ts = [threading.Thread(target={bump}) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert {total} == 2, {total}
"""

HANDOFF = """\
import threading, queue
import extlocked
def main():
    q = queue.Queue()
    ts = [threading.Thread(target=extlocked.slow_put, args=(q, i)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted([q.get(), q.get()]) == [0, 1]
"""
SLOW_PUT = """\
def slow_put(q, x):
    with _lock:  # serialise the producers
        time.sleep(0.001)
        q.put(x)
"""

IMPORTS = {
    "module": ("import extlocked", "extlocked.slow_bump", "extlocked.total"),
    "by-name": ("from extlocked import slow_bump\nimport extlocked", "slow_bump", "extlocked.total"),
    "dotted": ("import extpkg.locked", "extpkg.locked.slow_bump", "extpkg.locked.total"),
    "hand-off": ("", "", ""),  # HANDOFF: the sleep under the lock hung the check, not only --no-races
}


@pytest.mark.timeout(200)
@pytest.mark.parametrize("races", [True, False], ids=["races", "no-races"])
@pytest.mark.parametrize("how", list(IMPORTS))
def test_a_module_on_the_python_path_is_patched(how: str, races: bool, tmp_path: Path) -> None:
    lib, program = tmp_path / "lib", tmp_path / "program"
    (lib / "extpkg").mkdir(parents=True)
    program.mkdir()
    (lib / "extlocked.py").write_text(LOCKED + SLOW_PUT)
    (lib / "extpkg" / "__init__.py").write_text("")
    (lib / "extpkg" / "locked.py").write_text(LOCKED)
    import_line, bump, total = IMPORTS[how]
    text = HANDOFF if how == "hand-off" else PROGRAM.format(import_line=import_line, bump=bump, total=total)
    (program / "main_program.py").write_text(text)
    try:
        done = explore_command(
            "main_program.py:main",
            "--time-limit",
            "20",
            *([] if races else ["--no-races"]),
            cwd=program,
            env={"PYTHONPATH": os.pathsep.join((str(REPO), str(lib)))},
            timeout=90,  # it hung: a sleep under the real lock blocked the one OS thread
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the check hung past its time limit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("exhaustive"), done.stdout
    assert "executions" in done.stdout and "1 executions" not in done.stdout  # interleaved


def test_the_modules_reached_are_the_programs_only() -> None:
    found = patch_modules.reached((outside_programs,))
    # by module, by function, through another module, by an object's class; not the standard
    # library's (``dataclasses`` through ``Races``, though some of its files are traced), nor
    # lanecheck's own
    assert {counting, deeper, registry} <= set(found), found
    assert all(patch_modules.program_file(m) for m in found), found
    assert not [m for m in found if m.__name__.startswith(("model_checks", "dataclasses"))], found
