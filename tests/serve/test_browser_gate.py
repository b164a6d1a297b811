"""When the browser tests run, skip, or fail: the rule of tests/browser/conftest.py, without a browser."""

from __future__ import annotations

from tests.browser.conftest import chromium_missing


def test_a_present_chromium_runs_the_browser_tests() -> None:
    assert chromium_missing({"CI": "true"}, present=True) is None
    assert chromium_missing({}, present=True) is None


def test_a_missing_chromium_skips_saying_why() -> None:
    missing = chromium_missing({}, present=False)
    assert missing is not None and missing[0] == "skip" and "/usr/bin/chromium" in missing[1]
    assert chromium_missing({"CI": "false"}, present=False) == missing


def test_a_missing_chromium_fails_under_ci() -> None:
    missing = chromium_missing({"CI": "true"}, present=False)
    assert missing is not None and missing[0] == "fail" and "CI=true" in missing[1]
