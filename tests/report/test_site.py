"""The site of a design the report has never seen (the plug-in): every part comes from its Design."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from model_checks.registry import design
from model_checks.report import graphs
from model_checks.report.design_page import write_design

pytestmark = pytest.mark.timeout(240)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_landing_page_links_the_design(handoff_site: Path) -> None:
    text = read(handoff_site)
    assert handoff_site.name == "index.html"
    assert 'href="handoff/index.html"' in text
    assert "a two-thread handoff" in text
    assert (handoff_site.parent / "handoff" / "index.html").exists()


def test_spec_in_reviewer_form(handoff_site: Path) -> None:
    text = read(handoff_site.parent / "handoff" / "index.html")
    # variables with their declared types and trailing comments
    for name in ("box", "sent", "got", "consumer"):
        assert f"<code>{name}</code>" in text
    assert "items the producer has put" in text
    # actions with their guard and effect (the source) and their events
    for action in ("Put", "Take", "Wait"):
        assert f'id="action-{action}"' in text
    assert "if s.sent == c.items or s.box is not None" in text
    assert "InOrder" in text and "EveryItemArrives" in text
    assert "WF per process of <code>Producer</code>" in text
    assert "<code>Done</code>" in text  # the terminal states


def test_configurations_are_counted(handoff_site: Path) -> None:
    text = read(handoff_site.parent / "handoff" / "index.html")
    assert re.search(r"<code>small</code></td><td>verify --quick</td>.*?\d+ states, \d+ transitions", text)
    assert re.search(r"<code>standard</code></td><td>verify</td>.*?\d+ states", text)


def test_a_design_without_projections_says_so(handoff_site: Path) -> None:
    text = read(handoff_site.parent / "handoff" / "index.html")
    assert "this design declares no component projections" in text


@pytest.mark.skipif(
    not graphs.dot_available(), reason="Graphviz dot not installed (apt-get install graphviz)"
)
def test_each_projection_is_drawn_as_svg(tmp_path: Path) -> None:
    d = dataclasses.replace(design("job-pool"), mutants={})
    write_design(tmp_path, "job-pool", d, [], False, True, lambda _m: None)
    text = read(tmp_path / "job-pool" / "index.html")
    assert text.count('<div class="graph"><svg') == len(d.projections) == 3
    for name in d.projections:
        assert f'id="graph-{name}"' in text


def test_mutant_page_has_diagram_diff_and_replay(handoff_site: Path) -> None:
    page = handoff_site.parent / "handoff" / "mutants" / "check-then-wait.html"
    text = read(page)
    assert "Counterexample (3 steps, deadlock)" in text
    for k in (1, 2, 3):
        assert f'<tr id="step-{k}">' in text
        assert f'href="#step-{k}"' in text
    assert 'class="sequence"' in text and ">p</text>" in text and ">c</text>" in text
    assert 'consumer</code>: <span class="before">check</span>' in text
    assert "Deadlock" in text
    assert re.search(r"lanecheck explore handoff/check-then-wait --replay lc1\.[0-9a-f]{4}\.", text)
    assert "the mutant's <code>CheckThenWait</code>" in text  # the bug's source


def test_verdicts_and_coverage(handoff_site: Path) -> None:
    text = read(handoff_site.parent / "handoff" / "index.html")
    assert "handoff --variant check-then-wait" in text
    assert "only the explorer's rows were computed (report --quick)" in text
    assert re.search(r"<code>Put</code></a></td><td>\d", text)  # firings per action
    assert "harness and link-comparison rows were not computed" in text
    # the plug-in example has a trace format (session 48: the walk-through's trace step), and its
    # page says what its real runs gave under --quick (the words for a design without a format
    # are test_real_runs's)
    assert "state coverage of the real runs: no trace could be judged" in text
