"""`lanecheck explore MODULE:FUNCTION` / `FILE.py:FUNCTION`: a program of the user's own, written
against plain ``threading``, explored in patch mode; its failure replays from the printed string,
and what cannot be loaded is refused naming the problem (exit 2)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app

runner = CliRunner()

PROGRAM = """
import queue
import threading
import time

counter = {"n": 0}


def lost_update():
    def bump():
        counter["n"] = counter["n"] + 1

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def workers_then_join():
    q = queue.Queue()
    done = []
    mutex = threading.Lock()

    def worker():
        while True:
            item = q.get()
            with mutex:
                done.append(item)
            q.task_done()

    threading.Thread(target=worker, daemon=True).start()
    q.put(1)
    q.join()
    with mutex:
        assert done == [1]


def with_runtime(rt):
    flag = rt.event()
    rt.start_thread(flag.set, "setter")
    flag.wait()


def poll_with_sleep():
    ready = threading.Event()

    def worker():
        while not ready.is_set():
            time.sleep(0.01)

    t = threading.Thread(target=worker)
    t.start()
    ready.set()
    t.join()


def poll_with_timeout():
    q = queue.Queue()

    def worker():
        for _ in range(5):
            try:
                q.get(timeout=0.01)
                return
            except queue.Empty:
                pass

    t = threading.Thread(target=worker)
    t.start()
    q.put(1)
    t.join()


def two_arguments(a, b):
    pass


def returns_a_status():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    return 0


async def a_coroutine():
    pass


NOT_A_FUNCTION = 3
"""


@pytest.fixture
def program_file(tmp_path: Path) -> Path:
    path = tmp_path / "user_program.py"
    path.write_text(PROGRAM)
    return path


@pytest.mark.timeout(120)
def test_a_correct_program_is_proved(program_file: Path) -> None:
    result = runner.invoke(app, ["explore", f"{program_file}:workers_then_join", "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.output)
    assert facts["verdict"] == "exhaustive" and facts["races"] is True


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "function",
    [
        "with_runtime",  # a function taking the runtime is given it
        # What a plain program's main returns is no check: a real run ignores it; it was refused
        # in the harness's words ("a test may return None...").
        "returns_a_status",
    ],
)
def test_a_correct_function_of_the_program_exits_0(program_file: Path, function: str) -> None:
    result = runner.invoke(app, ["explore", f"{program_file}:{function}"])
    assert result.exit_code == 0, result.output


@pytest.mark.timeout(120)
def test_a_race_is_found_and_its_schedule_replays(
    program_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as a module of the current folder, the way `python -m` finds it
    monkeypatch.chdir(program_file.parent)
    monkeypatch.delitem(sys.modules, "user_program", raising=False)
    found = runner.invoke(app, ["explore", "user_program:lost_update", "--json"])
    assert found.exit_code == 1, found.output
    facts = json.loads(found.output)
    assert facts["failure"]["kind"] == "data_race"
    replayed = runner.invoke(
        app, ["explore", "user_program:lost_update", "--replay", facts["failure"]["schedule"], "--json"]
    )
    assert replayed.exit_code == 1, replayed.output
    assert json.loads(replayed.output)["failure"]["kind"] == "data_race"


@pytest.mark.timeout(120)
def test_fairness_at_sleeps_can_be_turned_off(program_file: Path) -> None:
    fair = runner.invoke(app, ["explore", f"{program_file}:poll_with_sleep", "--json"])
    assert fair.exit_code == 0, fair.output
    assert "fair at sleeps" in json.loads(fair.output)["verdict_text"]
    unfair = runner.invoke(app, ["explore", f"{program_file}:poll_with_sleep", "--no-fair-sleeps", "--json"])
    assert unfair.exit_code == 1, unfair.output
    assert json.loads(unfair.output)["failure"]["kind"] == "livelock"


@pytest.mark.timeout(120)
def test_the_timeout_limit_is_an_option(program_file: Path) -> None:
    """A polling loop of five timed gets is bounded by the default limit of 2 timeouts a thread,
    and proved with the limit raised past its tries."""
    bounded = runner.invoke(app, ["explore", f"{program_file}:poll_with_timeout", "--json"])
    assert bounded.exit_code == 3, bounded.output
    assert json.loads(bounded.output)["bounded_by"] == ["timeout_limit=2"]
    proved = runner.invoke(
        app, ["explore", f"{program_file}:poll_with_timeout", "--timeout-limit", "5", "--json"]
    )
    assert proved.exit_code == 0, proved.output


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("{file}:missing", "has no 'missing'"),
        ("{file}:NOT_A_FUNCTION", "is a int, not a function"),
        ("{file}:two_arguments", "needs 2 arguments"),
        ("{file}:a_coroutine", "is an async function"),
        ("{dir}/absent.py:main", "no such file"),
        ("no_such_module_anywhere:main", "cannot import no_such_module_anywhere"),
        (":main", "give MODULE:FUNCTION"),
    ],
)
def test_what_cannot_be_loaded_is_refused_naming_the_problem(
    program_file: Path, target: str, says: str
) -> None:
    name = target.format(file=program_file, dir=program_file.parent)
    result = runner.invoke(app, ["explore", name])
    assert result.exit_code == 2, result.output
    assert says in result.output


def test_a_swarm_is_refused_for_an_own_program(program_file: Path) -> None:
    result = runner.invoke(
        app,
        ["explore", f"{program_file}:lost_update", "--swarm", "2", "--engine", "ray", "--strategy", "pct"],
    )
    assert result.exit_code == 2, result.output
    assert "--swarm" in result.output and "built-in scenarios" in result.output


@pytest.mark.timeout(120)
def test_a_file_named_like_a_loaded_module_does_not_replace_it(tmp_path: Path) -> None:
    import queue

    path = tmp_path / "queue.py"
    path.write_text(PROGRAM)
    result = runner.invoke(app, ["explore", f"{path}:workers_then_join"])
    assert result.exit_code == 0, result.output
    assert sys.modules["queue"] is queue


@pytest.mark.timeout(120)
def test_a_file_imports_the_modules_beside_it_as_python_file_does(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "shared_counter_cfg.py").write_text("counter = {'n': 0}\n")
    (folder / "uses_sibling.py").write_text(
        "import threading\n"
        "import shared_counter_cfg\n\n\n"
        "def main():\n"
        "    def bump():\n"
        "        shared_counter_cfg.counter['n'] += 1\n\n"
        "    threads = [threading.Thread(target=bump) for _ in range(2)]\n"
        "    for t in threads:\n"
        "        t.start()\n"
        "    for t in threads:\n"
        "        t.join()\n"
    )
    result = runner.invoke(app, ["explore", f"{folder / 'uses_sibling.py'}:main", "--json"])
    assert result.exit_code == 1, result.output  # loaded, and its lost update found
    assert json.loads(result.output)["failure"]["kind"] == "data_race"


@pytest.mark.timeout(120)
def test_a_module_of_the_folder_loaded_before_and_not_imported_by_the_program_is_not_its(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a process that had loaded another module from the program's folder (a test run calling
    the command in-process), that module was patched as the program's: one making an Event
    subclass at import refused the check of a program that never imports it (session 41: a test
    failed or passed by which tests ran before it in the same worker)."""
    (tmp_path / "bystander_s41.py").write_text(
        "import threading\n\nclass OnceEvent(threading.Event):\n    pass\n\nonce = OnceEvent()\n"
    )
    (tmp_path / "prog_s41.py").write_text(
        "import threading\n\ndef main():\n    t = threading.Thread(target=lambda: None)\n"
        "    t.start()\n    t.join()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("bystander_s41")  # (loaded before, as another test would have)

    try:
        result = runner.invoke(app, ["explore", f"{tmp_path / 'prog_s41.py'}:main"])
    finally:
        sys.modules.pop("bystander_s41", None)
        sys.modules.pop("prog_s41", None)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("exhaustive"), result.output
