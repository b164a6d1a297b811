"""`lanecheck serve` in a real browser: click through a mutant's counterexample to the violated
invariant, then reopen the shared URL and see the same state (no console errors on the way)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from model_checks.registry import design
from model_checks.serve.server import running
from tests.browser.conftest import ConsoleWatch

pytestmark = pytest.mark.timeout(120)

# A mutant with a short counterexample: a post to a Scheduled lane reserves it a second time.
DESIGN, MUTANT = "work-lane", "double-reserve"


@pytest.fixture(scope="module")
def base_url_of_serve() -> Iterator[str]:
    with running(timeout=30) as url:  # a free localhost port, stopped after the module
        yield url


def state_after(page: Page) -> str:
    return page.locator("#state").inner_text()


def test_click_through_a_counterexample_and_reopen_its_url(
    page: Page, browser: Browser, base_url_of_serve: str
) -> None:
    mutant = design(DESIGN).mutant(MUTANT)
    page.goto(f"{base_url_of_serve}/{DESIGN}/{mutant.config}?mutant={MUTANT}")
    expect(page.locator("#status")).to_have_text("Every invariant holds here.")
    # the explorer's counterexample, once asked for, marks its next step on every page along it
    page.click("#jump")
    expect(page.locator("#status")).to_contain_text(mutant.expect)
    page.click("#restart")
    expect(page.locator("h2").first).to_have_text("State after 0 step(s)")
    clicks = 0
    while page.locator("a.action.cx-next").count():
        page.locator("a.action.cx-next").click()
        clicks += 1
        expect(page.locator("h2").first).to_have_text(f"State after {clicks} step(s)")
        assert clicks <= mutant.length
    assert clicks == mutant.length
    violated = page.locator(f'#invariants li.violated[data-invariant="{mutant.expect}"]')
    expect(violated).to_be_visible()
    expect(page.locator("#status")).to_have_text(f"Violated here: {mutant.expect}")
    shared, shown = page.url, state_after(page)
    assert re.search(rf"[?&]path=\d+(\.\d+){{{mutant.length - 1}}}$", shared), shared

    page.reload()
    assert state_after(page) == shown
    expect(violated).to_be_visible()

    # the shared URL in a fresh browser context: same state, same verdict
    other = browser.new_context()
    try:
        fresh = other.new_page()
        watch = ConsoleWatch()
        watch.attach(fresh)
        fresh.goto(shared)
        assert state_after(fresh) == shown
        expect(fresh.locator(f'#invariants li.violated[data-invariant="{mutant.expect}"]')).to_be_visible()
        assert watch.errors == []
    finally:
        other.close()

    page.click("#back")
    expect(page.locator("h2").first).to_have_text(f"State after {mutant.length - 1} step(s)")
    expect(page.locator("#status")).to_have_text("Every invariant holds here.")


def test_the_console_watch_catches_errors(browser: Browser) -> None:
    """The check every browser test relies on, shown failing on a page that logs an error."""
    context = browser.new_context()
    try:
        bad = context.new_page()
        watch = ConsoleWatch()
        watch.attach(bad)
        bad.set_content("<script>console.error('broken'); throw new Error('uncaught one')</script>")
        bad.wait_for_timeout(200)  # the events arrive asynchronously
        assert any("broken" in e for e in watch.errors), watch.errors
        assert any("uncaught one" in e for e in watch.errors), watch.errors
    finally:
        context.close()
