"""`lanecheck report` in a real browser, from file:// (offline): land on the index, open a design,
follow a counterexample step by step — each step's row and state diff shown, the sequence diagram
drawn — with no console errors (the ``page`` fixture fails the test on any)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from model_checks.registry import design
from model_checks.report import write_site

pytestmark = pytest.mark.timeout(240)

# The smallest built-in design (a few thousand states), and a mutant with a short counterexample.
DESIGN, MUTANT = "job-pool", "ignore-max"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield write_site(tmp_path_factory.mktemp("site"), [DESIGN], quick=True)


def test_follow_a_counterexample_step_by_step(page: Page, site: Path) -> None:
    page.goto(site.as_uri())
    page.get_by_role("link", name=DESIGN, exact=True).click()
    expect(page).to_have_url(re.compile(rf"/{DESIGN}/index\.html$"))
    expect(page.locator("#graphs ~ .graph svg").first).to_be_visible()
    page.get_by_role("link", name=MUTANT, exact=True).click()
    expect(page).to_have_url(re.compile(rf"/{DESIGN}/mutants/{MUTANT}\.html$"))

    diagram = page.locator("svg.sequence")
    expect(diagram).to_be_visible()
    length = design(DESIGN).mutant(MUTANT).length
    expect(diagram.locator("g.message")).to_have_count(length)
    expect(diagram.locator("g.lifeline").first).to_be_visible()
    for k in range(1, length + 1):
        diagram.locator(f"#msg-{k}").click()  # a message links to its step's row
        expect(page).to_have_url(re.compile(rf"#step-{k}$"))
        row = page.locator(f"tr#step-{k}")
        expect(row).to_be_visible()
        expect(row.locator("td").nth(4)).to_contain_text("→")  # the state diff: before → after
    expect(page.locator("#violation")).to_contain_text(design(DESIGN).mutant(MUTANT).expect)


def test_a_step_link_opens_on_that_step(page: Page, site: Path) -> None:
    url = (site.parent / DESIGN / "mutants" / f"{MUTANT}.html").as_uri() + "#step-2"
    page.goto(url)
    row = page.locator("tr#step-2")
    expect(row).to_be_in_viewport()
    # the linked row is the :target, highlighted
    assert row.evaluate("r => r.matches(':target')")
