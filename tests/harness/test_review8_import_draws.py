"""Session 40's eighth review, random draws around the explored program's import (r044, r043),
from the command line (``lanecheck explore`` imports the program: ``own_program.load``,
``patch_random.seeded_import``).

* r044: ``random.seed(3)`` at import was replaced by the draw seed, so the worker never drew
  0.2379... and the check said "exhaustive" of a program failing in every real run.
* r043: a draw at import came from the process's OS-seeded generator: the verdict flipped between
  identical runs. The module generator is now seeded with ``--seed`` before the import."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(240)

HERE = Path(__file__).parent
REPO = HERE.parents[1]
SEED_AT_IMPORT = f"{HERE / 'review8_import_seed_program.py'}:main"
DRAW_AT_IMPORT = f"{HERE / 'review8_import_draw_program.py'}:main"
OWN_GENERATORS = f"{HERE / 'review8_random_programs.py'}:own_generators"


def _explore(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_checks", "explore", *args],
        capture_output=True,
        text=True,
        timeout=150,
        cwd=REPO,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


def _json(*args: str) -> dict[str, Any]:
    run = _explore(*args, "--json")
    out: dict[str, Any] = json.loads(run.stdout)
    return out


def _replayed(found: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    command = found["replay"].removeprefix("lanecheck explore ").split()
    return _explore(*command)


def test_a_seed_at_import_gives_every_execution_its_sequence() -> None:
    # r044: before, "exhaustive" (the worker drew Random(0)'s 0.844..., the draw seed's)
    for seed in ("0", "5"):
        found = _json(SEED_AT_IMPORT, "--seed", seed)
        assert found["verdict"] == "failed", found["verdict_text"]
        assert found["failure"]["kind"] == "assertion", found["failure"]
        assert str(random.Random(3).random()) in found["failure"]["message"], found["failure"]
        again = _replayed(found)
        assert again.returncode == 1 and str(random.Random(3).random()) in again.stdout, again.stdout


def test_a_draw_at_import_follows_the_seed_and_the_verdict_names_it() -> None:
    # r043: before, the import drew from the OS-seeded generator: 4 of 6 runs exhaustive, 2 deadlock
    held = [_json(DRAW_AT_IMPORT, "--seed", "0") for _ in range(2)]
    for run in held:  # random.seed(0): 0.844... >= 0.5, one lock order
        assert run["verdict"] == "exhaustive", run["verdict_text"]
        assert "module generator: the state the program's import left" in run["verdict_text"], run
        assert "seeded 0 (--seed) before the import" in run["verdict_text"], run["verdict_text"]
    assert held[0]["executions"] == held[1]["executions"]
    found = [_json(DRAW_AT_IMPORT, "--seed", "1") for _ in range(2)]
    for run in found:  # random.seed(1): 0.134... < 0.5, ABBA
        assert run["verdict"] == "failed" and run["failure"]["kind"] == "deadlock", run["verdict_text"]
        assert "--seed 1" in run["replay"], run["replay"]
    assert found[0]["failure"]["schedule"] == found[1]["failure"]["schedule"]
    again = _replayed(found[0])
    assert again.returncode == 1 and "deadlock" in again.stdout, again.stdout + again.stderr


def test_a_program_that_does_not_touch_the_generator_at_import_draws_from_the_draw_seed() -> None:
    # the import left the generator as lanecheck seeded it: the draw seed's sequence, as before
    run = _json(OWN_GENERATORS, "--seed", "4")
    assert run["verdict"] == "exhaustive", run["verdict_text"]
    assert "seeded 4 in every execution" in run["verdict_text"], run["verdict_text"]
    assert "the state the program's import left" not in run["verdict_text"], run["verdict_text"]
