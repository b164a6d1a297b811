"""The explorer app through Starlette's TestClient: every design, every mutant, every bad path."""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from model_checks.explorer.check import check
from model_checks.registry import designs
from model_checks.serve import pages
from model_checks.serve.app import create_app
from model_checks.serve.shortest import Found, _search
from model_checks.serve.subject import subject

pytestmark = pytest.mark.timeout(240)

ALL_MUTANTS = [(name, m) for name, d in designs().items() for m in d.mutants]


@pytest.fixture(scope="module")
def client() -> TestClient:
    # a server error must show as a 500 status here, not as an exception the test never sees
    return TestClient(create_app(), raise_server_exceptions=False)


def invariant_classes(html: str) -> dict[str, str]:
    """invariant name -> "holds" | "violated", as the page shows them."""
    return {
        name: cls for cls, name in re.findall(r'<li class="(holds|violated)" data-invariant="([^"]+)"', html)
    }


def test_the_index_lists_every_registered_design(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    for name, d in designs().items():
        assert f'href="/{name}/{d.quick}"' in page.text, name
        for mutant in d.mutants:
            assert f"mutant={mutant}" in page.text, (name, mutant)


@pytest.mark.parametrize("name", list(designs()))
def test_every_design_opens_and_steps_with_no_code_of_its_own(client: TestClient, name: str) -> None:
    d = designs()[name]
    first = client.get(f"/{name}/{d.quick}")
    assert first.status_code == 200, first.text
    shown = invariant_classes(first.text)
    assert set(shown) == {inv.name for inv in d.spec.invariants} | {"Deadlock"}
    assert all(cls == "holds" for cls in shown.values()), shown
    buttons = re.findall(r'<a class="action[^"]*" data-index="(\d+)"', first.text)
    assert buttons, "no enabled action in the initial state"
    # three steps along the first enabled action: each page links back to the one before
    path: list[int] = []
    for _ in range(3):
        page = client.get(pages.location(name, d.quick, None, 0, path))
        if 'data-index="0"' not in page.text:
            break
        path.append(0)
        after = client.get(pages.location(name, d.quick, None, 0, path))
        assert after.status_code == 200
        assert f'id="back" href="{pages.location(name, d.quick, None, 0, path[:-1])}"' in after.text
        assert f"State after {len(path)} step(s)" in after.text
    assert path


@pytest.mark.parametrize(("name", "mutant"), ALL_MUTANTS)
def test_every_mutant_jumps_to_its_shortest_counterexample(
    client: TestClient, name: str, mutant: str
) -> None:
    m = designs()[name].mutant(mutant)
    jump = client.get(f"/{name}/{m.config}/counterexample?mutant={mutant}", follow_redirects=False)
    assert jump.status_code == 303, jump.text
    url = jump.headers["location"]
    steps = re.search(r"path=([\d.]*)", url)
    assert steps is not None and len(steps.group(1).split(".")) == m.length, url
    page = client.get(url)
    assert page.status_code == 200
    shown = invariant_classes(page.text)
    if m.expect in shown:  # an invariant, or Deadlock: it fails in the last state
        assert shown[m.expect] == "violated", shown
        assert "Violated here:" in page.text and m.expect in page.text.split("Violated here:")[1][:200]
    else:  # a liveness property: the page says so and where the loop goes back to
        assert f"steps to {m.expect} (liveness)" in page.text and "loops back" in page.text
    assert "you are on it" in page.text
    # the same URL, opened again, is the same state: the page does not depend on the visit
    assert client.get(url).text == page.text


def test_the_path_replays_to_the_explorer_s_own_last_state() -> None:
    subj = subject("work-lane", "small", "split-idle")
    found = _search(subj, 60.0)
    assert isinstance(found, Found)
    from model_checks.serve.walk import replay

    result = check(subj.instance.spec, subj.instance.constants, config="small")
    assert result.counterexample is not None
    assert replay(subj.instance, found.init, found.path).state == result.counterexample.steps[-1].state


def test_the_counterexample_link_marks_the_next_step_once_known(client: TestClient) -> None:
    url = client.get("/work-lane/small/counterexample?mutant=double-reserve", follow_redirects=False).headers[
        "location"
    ]
    path = re.search(r"path=([\d.]*)", url)
    assert path is not None
    first = path.group(1).split(".")[0]
    start = client.get("/work-lane/small?mutant=double-reserve").text
    assert f'<a class="action cx-next" data-index="{first}"' in start
    # a step off the counterexample: no mark, and the page says so
    other = "1" if first == "0" else "0"
    off = client.get(f"/work-lane/small?mutant=double-reserve&path={other}").text
    assert "action cx-next" not in off and "you have left it" in off


def test_the_spec_has_no_counterexample_to_jump_to(client: TestClient) -> None:
    page = client.get("/work-lane/small")
    assert 'id="jump"' not in page.text and "no counterexample to jump to" in page.text
    jump = client.get("/work-lane/small/counterexample")
    assert jump.status_code == 404 and "no seeded bug" in jump.text


def test_a_search_stopped_by_its_bound_is_no_counterexample() -> None:
    found = _search(subject("work-stealing", "small", "missing-fence"), 0.0)
    assert not isinstance(found, Found) and "stopped" in found.reason


def test_the_step_changes_are_marked(client: TestClient) -> None:
    url = client.get("/work-lane/small/counterexample?mutant=double-reserve", follow_redirects=False).headers[
        "location"
    ]
    page = client.get(url).text
    assert '<tr class="changed" data-variable=' in page
    initial = client.get("/work-lane/small?mutant=double-reserve").text
    assert 'class="changed"' not in initial


BAD: list[tuple[str, int, str]] = [
    ("/nope/small", 404, "no design 'nope'"),
    ("/nope", 404, "no design 'nope'"),
    ("/work-lane/colossal", 404, "no configuration 'colossal'"),
    ("/work-lane/small?mutant=nope", 404, "no variant 'nope'"),
    ("/work-lane?mutant=nope", 404, "no variant 'nope'"),
    ("/work-lane/small/counterexample?mutant=nope", 404, "no variant 'nope'"),
    ("/work-lane/small?path=0.x.1", 400, "step 2: 'x' is not a successor's index"),
    ("/work-lane/small?path=0..1", 400, "step 2: '' is not"),
    ("/work-lane/small?path=-1", 400, "step 1:"),
    ("/work-lane/small?path=%D9%A3", 400, "step 1:"),  # an Arabic-Indic digit: int() takes it, we do not
    ("/work-lane/small?path=0.99", 404, "step 2: 99 is not a successor of the state after step 1"),
    ("/work-lane/small?path=" + "9" * 40, 400, "step 1:"),
    ("/work-lane/small?path=" + ".".join(["0"] * 10_001), 400, "at most 10,000"),
    ("/work-lane/small?init=1", 404, "init: the spec has 1 initial state(s)"),
    ("/work-lane/small?init=x", 400, "init:"),
]


@pytest.mark.parametrize(("url", "status", "words"), BAD)
def test_bad_input_is_a_4xx_page_naming_it(client: TestClient, url: str, status: int, words: str) -> None:
    page = client.get(url)
    assert page.status_code == status, (url, page.status_code, page.text[-400:])
    assert words in html.unescape(page.text), (url, page.text[-600:])


def test_a_stale_path_links_to_its_longest_good_prefix(client: TestClient) -> None:
    page = client.get("/work-lane/small?path=0.0.99.1")
    assert page.status_code == 404 and "step 3: 99 is not a successor" in page.text
    assert 'href="/work-lane/small?path=0.0">the state before step 3' in page.text


def test_a_path_past_a_deadlock_names_the_step() -> None:
    client = TestClient(create_app(), raise_server_exceptions=False)
    url = client.get(
        "/job-wakeup/small/counterexample?mutant=claim-then-listen", follow_redirects=False
    ).headers["location"]
    page = client.get(url)
    assert invariant_classes(page.text)["Deadlock"] == "violated"
    assert "No action is enabled" in page.text
    stale = client.get(url + ".0")
    assert stale.status_code == 404 and "(its successors: none: no action is enabled there)" in stale.text


def test_values_are_escaped() -> None:
    html = pages.value_html({"<k>": ["<v>", 1]})
    assert "<v>" not in html and "<k>" not in html and "&lt;v&gt;" in html


def test_the_share_link_is_the_page_s_own_url(client: TestClient) -> None:
    url = "/work-lane/small?mutant=split-idle&path=0.1.0"
    page = client.get(url)
    assert f'id="share" href="{url.replace("&", "&amp;")}"' in page.text
