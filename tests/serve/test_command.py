"""`lanecheck serve` on the command line: bad names and a taken port exit 2 naming them; a real start."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.commands.serve import start_page
from model_checks.serve.server import running

pytestmark = pytest.mark.timeout(120)


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["serve", *args])


def refused(result: Any, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    for word in words:
        assert word in result.output, (word, result.output)


@pytest.fixture
def taken_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["nope"], ["no design 'nope'", "work-lane"]),
        (["work-lane", "--mutant", "nope"], ["--mutant", "no variant 'nope'", "split-idle"]),
        (["work-lane", "--config", "colossal"], ["--config", "no configuration 'colossal'", "small"]),
        (["work-lane", "-c", "colossal", "--mutant", "split-idle"], ["--config", "colossal"]),
        (["--mutant", "split-idle"], ["--mutant", "without a DESIGN"]),
        (["--config", "small"], ["--config", "without a DESIGN"]),
        (["work-lane", "--port", "65536"], ["--port"]),
        (["work-lane", "--port", "-1"], ["--port"]),
        (["work-lane", "--no-open", "--host", "no-such-host.invalid"], ["--host", "no-such-host.invalid"]),
    ],
)
def test_bad_input_exits_2_naming_it(args: list[str], words: list[str]) -> None:
    refused(run(*args), *words)


def test_a_port_in_use_exits_2_naming_it(taken_port: int) -> None:
    refused(run("work-lane", "--no-open", "--port", str(taken_port)), "--port", str(taken_port))


def test_the_start_page_is_the_mutant_s_own_configuration() -> None:
    assert start_page(None, None, None) == "/"
    assert start_page("work-lane", None, None) == "/work-lane/small"
    assert start_page("admission", None, "claim-then-admit") == "/admission/livelock?mutant=claim-then-admit"
    assert start_page("admission", "small", "claim-then-admit") == "/admission/small?mutant=claim-then-admit"


def test_the_server_in_a_thread_answers_and_stops() -> None:
    with running() as url:
        assert httpx.get(f"{url}/work-lane/small", timeout=10).status_code == 200
        port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:  # stopped: the port is free again
        probe.bind(("127.0.0.1", port))


def test_the_command_serves_until_stopped() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "model_checks", "serve", "event-pool", "--no-open", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once the port listens
        assert line.startswith("lanecheck serve: http://127.0.0.1:"), (line, process.stderr)
        url = line.split()[2]
        assert url.endswith("/event-pool/small")
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200 and 'data-invariant="NoLostWakeup"' in page.text
    finally:
        process.terminate()
        process.wait(timeout=30)
