"""The throwaway server's rules: where its binaries are found, and when a missing one skips or fails."""

from __future__ import annotations

from pathlib import Path

from tests.pg import find_bindir, missing_server


def test_a_missing_server_skips_saying_why_but_fails_under_ci() -> None:
    action, message = missing_server("no PostgreSQL server binary", {})
    assert action == "skip" and "no PostgreSQL server binary" in message and "postgresql" in message
    action, message = missing_server("no PostgreSQL server binary", {"CI": "true"})
    assert action == "fail" and "CI=true" in message
    assert missing_server("x", {"CI": "false"})[0] == "skip"


def test_the_binaries_are_found_on_path(tmp_path: Path) -> None:
    for name in ("initdb", "pg_ctl"):
        tool = tmp_path / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    assert find_bindir(str(tmp_path)) == tmp_path
    (tmp_path / "pg_ctl").unlink()  # initdb alone is no server setup: look elsewhere
    assert find_bindir(str(tmp_path)) != tmp_path
