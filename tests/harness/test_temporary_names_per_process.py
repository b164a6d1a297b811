"""Temporary names in controlled threads come from each thread's entropy sequence, which is the
check's (``patch_random._next_name``): alike in every execution of a process, and, since session
45, mixed with a number drawn once a process. Without it two processes checking one program at
once (two pytest workers) made the same names, and one's ``NamedTemporaryFile`` deleted the
file the other had just made under that name (``FileNotFoundError``, half of forty concurrent
runs of review 12's temporary-file tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
_CHECK = """
import json
from tests.harness import temporary_names_programs as prog
from tests.harness.patched_runs import run_with_outcomes
result = run_with_outcomes(prog, prog.a_threads_temporary_name, time_limit=60)
assert result.verdict == "exhaustive", result.report()
print(json.dumps(sorted(result.outcomes)))
"""


def _names_of_one_check() -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _CHECK], cwd=_ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    names: list[str] = json.loads(done.stdout.splitlines()[-1])
    return names


@pytest.mark.timeout(240)
def test_two_processes_checking_one_program_name_their_files_apart() -> None:
    first, second = _names_of_one_check(), _names_of_one_check()
    assert len(first) == 1 and len(second) == 1, (first, second)  # (one name in every execution)
    assert first != second
