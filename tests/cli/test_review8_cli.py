"""Review 8's command-line defects of ``lanecheck explore`` (patch mode).

* r059 with ``--hash-seeds 3 --hash-seed 4294967294``: the third child ran under 2**32, died
  with "Fatal Python error" and the command printed an empty verdict (stdout empty with --json).
* r075 with ``--json``: the program's print at import and its ``atexit`` print were on stdout
  around the JSON.
* r010: a failure's JSON named neither the hash seed nor the replay command, and a replay under
  another hash seed said "the program or its failure changed".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.harness.explore_runs import explore_command

pytestmark = pytest.mark.timeout(150)

COUNTER = """
import threading
lk = threading.Lock()
n = [0]
def w():
    with lk:
        n[0] += 1
def main():
    ts = [threading.Thread(target=w) for _ in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert n[0] == 2
"""

PRINTS = """
import atexit, threading
print("hello at import")
atexit.register(lambda: print("bye at exit"))
def main():
    t = threading.Thread(target=lambda: print("from worker")); t.start(); t.join()
"""

# fails under PYTHONHASHSEED=1 only (the two keys land in different shards)
SHARDS = """
import threading
SHARDS = [threading.Lock(), threading.Lock()]
total = {"n": 0}
def w(key):
    with SHARDS[hash(key) % 2]:
        v = total["n"]
        total["n"] = v + 1
def main():
    total["n"] = 0
    a = threading.Thread(target=w, args=("k1",)); b = threading.Thread(target=w, args=("k2",))
    a.start(); b.start(); a.join(); b.join()
    assert total["n"] == 2, total
"""


def _explore(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "prog.py"
    program.write_text(source)
    return explore_command(f"{program}:main", *args, env={"PYTHONHASHSEED": "0"}, timeout=140)


@pytest.mark.parametrize("as_json", [False, True])
def test_a_hash_seed_range_past_the_bound_is_refused_before_any_child(tmp_path: Path, as_json: bool) -> None:
    run = _explore(
        tmp_path, COUNTER, "--hash-seeds", "3", "--hash-seed", "4294967294", *(["--json"] if as_json else [])
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Fatal Python error" not in run.stdout + run.stderr
    said = json.loads(run.stdout)["error"] if as_json else run.stderr
    assert "4,294,967,295" in said and "--hash-seeds" in said, said
    # the last seed in range is still run
    ok = _explore(tmp_path, COUNTER, "--hash-seeds", "2", "--hash-seed", "4294967294")
    assert ok.returncode == 0 and "exhaustive under each (2 of 2 run)" in ok.stdout, ok.stdout + ok.stderr


def test_with_json_stdout_is_the_json_only_even_at_import_and_exit(tmp_path: Path) -> None:
    run = _explore(tmp_path, PRINTS, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["verdict"] == "exhaustive", run.stdout
    assert "hello at import" in run.stderr and "bye at exit" in run.stderr, run.stderr


def test_a_failures_json_names_the_hash_seed_and_the_replay_command(tmp_path: Path) -> None:
    run = _explore(tmp_path, SHARDS, "--hash-seed", "1", "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    out = json.loads(run.stdout)
    assert out["hash_seed"] == 1 and "--hash-seed 1 --replay lc1." in out["replay"], out
    schedule = out["failure"]["schedule"]
    again = _explore(tmp_path, SHARDS, "--hash-seed", "1", "--replay", schedule)
    assert again.returncode == 1, again.stdout + again.stderr
    wrong = _explore(tmp_path, SHARDS, "--replay", schedule)
    assert wrong.returncode == 2, wrong.stdout + wrong.stderr
    assert "--hash-seed" in wrong.stderr and "PYTHONHASHSEED=0" in wrong.stderr, wrong.stderr
