"""The report's parts on their own: rows files, row owners, lifelines, caps, graphs without dot,
a design's own pages."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from pathlib import Path

import pytest

from model_checks.design import Design
from model_checks.explorer.check import check
from model_checks.registry import design
from model_checks.report import charts, graphs, sequence
from model_checks.report import rows as verify_rows
from model_checks.report.counting import count_config
from model_checks.report.design_page import write_design
from model_checks.report.extras import extra_pages
from model_checks.report.html import unique_slugs
from model_checks.verify import VerifyRow

ROW = {"area": "spec", "subject": "work-lane [small]", "expected": "holds", "actual": "holds", "figures": "x"}


def test_rows_round_trip() -> None:
    text = json.dumps({"ok": True, "rows": [{**ROW, "seconds": 1.5, "ok": True}]})
    assert verify_rows.parse(text) == [VerifyRow(**ROW, seconds=1.5)]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{", ["not JSON", "line 1"]),
        ("[]", ["rows"]),
        (json.dumps({"rows": [ROW]}), ["row 1", "seconds"]),
        (json.dumps({"rows": [{**ROW, "seconds": "1"}]}), ["row 1", "seconds"]),
        (json.dumps({"rows": [{**ROW, "seconds": 1, "area": 3}]}), ["row 1", "area"]),
        (json.dumps({"rows": [{**ROW, "seconds": math.nan}]}), ["row 1", "seconds", "finite"]),
        (json.dumps({"rows": [7]}), ["row 1", "not an object"]),
    ],
)
def test_bad_rows_are_refused_by_name(text: str, words: list[str]) -> None:
    with pytest.raises(ValueError) as caught:
        verify_rows.parse(text)
    for word in words:
        assert word in str(caught.value)


def test_rows_go_to_the_design_named_whole() -> None:
    def row(subject: str) -> VerifyRow:
        return VerifyRow("spec", subject, "holds", "holds", "", 0.0)

    rows = [
        row("work-lane [small]"),
        row("work-lane-lockfree [small]"),
        row("scenario work-lane/x"),
        row("other"),
    ]
    mine, rest = verify_rows.by_design(rows, ["work-lane", "work-lane-lockfree"])
    assert [r.subject for r in mine["work-lane"]] == ["work-lane [small]", "scenario work-lane/x"]
    assert [r.subject for r in mine["work-lane-lockfree"]] == ["work-lane-lockfree [small]"]
    assert [r.subject for r in rest] == ["other"]


@pytest.mark.timeout(120)
def test_lifelines_come_from_processes_and_event_fields() -> None:
    d = design("work-lane")
    m = d.mutant("split-idle")
    result = check(m.spec, m.constants(d.config(m.config)))
    assert result.counterexample is not None
    lanes, messages = sequence.lifelines_and_messages(m.spec, result.counterexample)
    assert lanes[:2] == ["p0", "w0"] and "lane 0" in lanes  # `lane=0` names the spec's Lanes
    assert len(messages) == result.counterexample.length == m.length
    take = next(x for x in messages if ". Take" in x.label)
    assert lanes[take.target] == "lane 0" and lanes[take.source] == "w0"
    internal = next(x for x in messages if ". Admit" in x.label)
    assert internal.source == internal.target  # an internal step with no parameter: to itself
    svg = sequence.svg(m.spec, result.counterexample, "end")
    assert svg.count('class="message"') == m.length and 'href="#step-12"' in svg


@pytest.mark.timeout(60)
def test_a_count_cut_short_says_so() -> None:
    text = count_config(design("work-lane"), "standard", 0.0).text
    assert text.startswith("not counted (over 0 s")
    assert count_config(design("work-lane"), "no-such-config", 5.0).text.startswith("not counted: ")


@pytest.mark.timeout(240)
def test_without_dot_the_page_says_so(
    plugin_registered: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graphs, "dot_available", lambda: False)
    said: list[str] = []
    d = design("job-pool")
    write_design(tmp_path, "job-pool", _without_mutants(d), [], False, True, said.append)
    text = (tmp_path / "job-pool" / "index.html").read_text()
    assert graphs.DOT_MISSING in said
    assert "Graphviz `dot` is not installed" in text and "<th>from</th>" in text


def _without_mutants(d: Design) -> Design:
    return dataclasses.replace(d, mutants={})


def good_pages(quick: bool) -> Iterable[tuple[str, str]]:
    yield "load per worker", charts.bar_chart("tasks", [("W0", 3.0), ("W1", 1.0)])


def bad_pages(quick: bool) -> Iterable[tuple[str, str]]:
    raise RuntimeError("no simulator here")


@pytest.mark.timeout(240)
def test_a_design_s_own_pages(plugin_registered: Path, tmp_path: Path) -> None:
    base = design("handoff")
    with_pages = dataclasses.replace(base, report_pages=(f"{__name__}:good_pages", f"{__name__}:bad_pages"))
    pages, problems = extra_pages(with_pages, True)
    assert [p.title for p in pages] == ["load per worker"] and "<svg" in pages[0].fragment
    assert problems == [f"{__name__}:bad_pages: RuntimeError: no simulator here"]
    write_design(tmp_path, "handoff", with_pages, [], False, True, lambda _m: None)
    text = (tmp_path / "handoff" / "index.html").read_text()
    assert 'href="extra/load_per_worker.html"' in text and "no simulator here" in text
    assert (tmp_path / "handoff" / "extra" / "load_per_worker.html").exists()
    assert extra_pages(base, True) == ([], [])  # no pages named, none made


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0])
def test_a_chart_refuses_values_it_cannot_draw(value: float) -> None:
    with pytest.raises(ValueError, match="W0"):
        charts.bar_chart("t", [("W0", value)])


def test_slugs_are_stable_and_distinct() -> None:
    assert unique_slugs(["a b", "a_b", "x/y", ".."]) == {
        "a b": "a_b",
        "a_b": "a_b-2",
        "x/y": "x_y",
        "..": "_",
    }
