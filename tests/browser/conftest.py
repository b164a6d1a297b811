"""Browser tests: pytest-playwright driving the Debian ``chromium`` package (no browser download).

* Every test here skips, saying why, where ``/usr/bin/chromium`` is missing — except under
  ``CI=true``, where that is a failure (``.ci/components.sh`` installs it there).
* Chromium is started headless with its background connections off (the machine may have no
  network: no update checks, no sync, no component downloads, no QUIC probes).
* ``page`` is pytest-playwright's page, watched: any console error or uncaught page error fails
  the test (``console_errors`` holds them, for a test that wants to look).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Error, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_missing(environ: dict[str, str], present: bool) -> tuple[str, str] | None:
    """None when the browser tests can run; else ("skip" | "fail", why)."""
    if present:
        return None
    why = f"{CHROMIUM} not found: the browser tests need Debian's chromium (bash .ci/components.sh)"
    return (
        ("fail", why + " — and CI=true, where it must be installed")
        if environ.get("CI") == "true"
        else ("skip", why)
    )


@pytest.fixture(autouse=True)
def _chromium_present() -> None:
    missing = chromium_missing(dict(os.environ), CHROMIUM.exists())
    if missing is not None:
        action, why = missing
        if action == "fail":
            pytest.fail(why, pytrace=False)
        pytest.skip(why)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


class ConsoleWatch:
    """Collects a page's console errors and uncaught exceptions."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def attach(self, page: Page) -> None:
        page.on("console", self._console)
        page.on("pageerror", self._uncaught)

    def _uncaught(self, error: Error) -> None:
        self.errors.append(f"uncaught: {error}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console.error at {message.location.get('url', '?')}: {message.text}")


@pytest.fixture
def console_errors() -> ConsoleWatch:
    return ConsoleWatch()


@pytest.fixture
def page(page: Page, console_errors: ConsoleWatch) -> Iterator[Page]:
    """pytest-playwright's page; the test fails on any console error the page logged."""
    console_errors.attach(page)
    yield page
    if console_errors.errors:
        pytest.fail("browser console errors:\n" + "\n".join(console_errors.errors), pytrace=False)
