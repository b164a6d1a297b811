"""The sixth outside review's cases that the catalogue (patch_review6_programs.py) cannot hold:
``logging.basicConfig`` in the explored function needs a process whose root logger has no
handler (pytest's has its own), and what a program changes in the process outlives no check."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from model_checks.harness import check, patched
from tests.harness import patch_review6_programs as programs
from tests.harness.explore_runs import REPO, explore_command
from tests.harness.patched_runs import assert_proved_race_free, run_patched

BASIC_CONFIG = """\
import io, logging, threading
from tests.harness.program_threads import run_copies

def basic_config_fresh():
    # correct: basicConfig configures the root logger on the first (only) call of a real run
    buf = io.StringIO()
    logging.basicConfig(stream=buf, level=logging.INFO)
    lock = threading.Lock()
    def work():
        with lock:
            logging.info("hello")
    run_copies(work)
    assert buf.getvalue().count("hello") == 2, buf.getvalue()
"""


def test_basic_config_in_the_explored_function_is_proved(tmp_path: Path) -> None:
    # The root logger's handler, added by the first execution, was kept: the later ones logged
    # through it to the first execution's stream, on that execution's controlled lock ("the test
    # is not deterministic").
    (tmp_path / "basic_config.py").write_text(BASIC_CONFIG)
    done = explore_command(
        "basic_config.py:basic_config_fresh",
        "--time-limit",
        "30",
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("exhaustive"), done.stdout
    assert "1 executions" not in done.stdout, done.stdout  # the threads were interleaved


def test_what_a_program_sets_in_the_process_ends_with_its_check() -> None:
    for program in (programs.environ_fresh, programs.sys_flag_fresh, programs.logger_configured_in_main):
        assert_proved_race_free(run_patched(programs, program, time_limit=60))
    assert programs._VARIABLE not in os.environ
    assert not hasattr(sys, "_lanecheck_tests_review6_flag")
    assert not logging.getLogger("lanecheck.tests.review6").handlers


def test_what_the_test_sets_between_two_checks_stays() -> None:
    with patched(programs):
        assert_proved_race_free(check(lambda rt: programs.environ_fresh(), time_limit=60))
        os.environ["LANECHECK_TESTS_REVIEW6_BETWEEN"] = "1"
        try:
            assert_proved_race_free(check(lambda rt: programs.sys_flag_fresh(), time_limit=60))
            assert os.environ.get("LANECHECK_TESTS_REVIEW6_BETWEEN") == "1"
        finally:
            del os.environ["LANECHECK_TESTS_REVIEW6_BETWEEN"]
    assert programs._VARIABLE not in os.environ


def test_a_handler_an_execution_made_leaves_the_registry_when_it_ends() -> None:
    """Its weak reference in ``logging._handlerList`` takes the module lock when the handler dies:
    freed by the collector during a later execution, that was a step there at whatever point the
    collection came ("the test is not deterministic" under plain DFS with the race detector)."""
    registered = list(logging._handlerList)  # type: ignore[attr-defined]
    with patched(programs):
        result = check(lambda rt: programs.logger_configured_in_main(), strategy="dfs", time_limit=60)
    assert_proved_race_free(result)
    assert result.executions > 1
    assert logging._handlerList == registered  # type: ignore[attr-defined]
