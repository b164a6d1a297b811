"""One table (``harness/own_code.py``) says which code in the harness's folder is its own: every
module is named in it, and each reader (operation sources, the state fingerprint, the race
detector) draws its line from it; a file named nowhere is code under test to all of them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from model_checks.harness import own_code, race_sites
from model_checks.harness.rt import ending
from model_checks.harness.rt import fingerprint as fp


def test_every_module_of_the_harness_is_named_once() -> None:
    modules = {str(p) for p in Path(own_code.HARNESS).rglob("*.py")}
    assert modules, own_code.HARNESS
    unnamed = sorted(m for m in modules if not own_code.own(m) and m not in own_code.PROGRAM_FILES)
    assert not unnamed, f"name these in model_checks/harness/own_code.py: {unnamed}"
    assert not [p for p in own_code.PROGRAM_FILES if own_code.own(p)]
    named = own_code.MACHINERY_FILES | own_code.WRAPPERS | own_code.PROGRAM_FILES
    assert not sorted(f for f in named if not os.path.exists(f)), "a name that is no module"


def _traced(filename: str) -> bool:
    # the source names the file: equal code objects (the file name aside) share one cache entry
    return race_sites.code_table(compile(f"x = {filename!r}\nx.y = 2\n", filename, "exec")) is not None


# file -> (fingerprint: machinery, fingerprint: globals are state, skipped as a source, traced)
READINGS = {
    "a_new_program.py": (False, True, False, True),
    "rt/scheduler.py": (True, False, True, False),
    "strategies/search.py": (True, False, True, False),
    "api.py": (True, False, True, False),
    "patch.py": (False, False, True, False),
    "examples.py": (False, True, False, True),
    "lane_programs.py": (False, True, True, True),
    "lane_posts.py": (False, True, True, True),
}


@pytest.mark.parametrize("name", sorted(READINGS))
def test_each_reader_draws_its_line_from_the_table(name: str) -> None:
    path = own_code.HARNESS + name
    got = (fp._machinery(path), fp._program_file(path), path.startswith(ending.SKIP_PREFIXES), _traced(path))
    assert got == READINGS[name]
