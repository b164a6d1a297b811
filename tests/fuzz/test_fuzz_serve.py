"""Fuzz the URLs of `lanecheck serve` (the Starlette app, through its TestClient).

URLs are drawn from the real design, configuration and mutant names mixed with garbage (odd
Unicode, separators, huge numbers), over every route and a few that do not exist, with ``path``
and ``init`` values well-formed, stale or malformed. The property: never a server error; every
answer is an HTML page, and every refusal (4xx) shows a message naming the problem.

A valid mutant's ``counterexample`` runs the explorer, so it is drawn only for the smallest design
at its quick configuration (searched once, then cached): the CI profile stays within seconds.
"""

from __future__ import annotations

import html
import re
import warnings
from urllib.parse import quote, urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.testclient import TestClient

from model_checks.registry import designs
from model_checks.serve.app import create_app
from tests.fuzz.conftest import PROFILE

SMALL = "job-pool"  # the smallest built-in design: its counterexamples take milliseconds
DESIGNS = designs()
CONFIGS = sorted({c for d in DESIGNS.values() for c in d.configs})
MUTANTS = sorted({m for d in DESIGNS.values() for m in d.mutants})
ERROR = re.compile(r'<p id="error" class="bad">(.*?)</p>', re.S)

garbage = st.text(min_size=0, max_size=40) | st.sampled_from(
    ["", ".", "..", "%", "%00", "\x00", "a/b", "?", "#", " ", "é", "\u202e", "-1", "9" * 30, "counterexample"]
)
numbers = st.integers(min_value=-5, max_value=2**70).map(str)
paths = st.one_of(
    st.lists(st.integers(min_value=0, max_value=6), max_size=12).map(lambda xs: ".".join(map(str, xs))),
    st.lists(numbers, max_size=4).map(".".join),
    garbage,
)


@st.composite
def urls(draw: st.DrawFn) -> tuple[str, str | None]:
    """A URL, and the design name it names when that name is an unregistered one (else None)."""
    design = draw(st.sampled_from(sorted(DESIGNS)) | garbage)
    known = DESIGNS.get(design)
    own = list(known.configs) if known is not None else []
    config = (
        draw(st.sampled_from(own + CONFIGS) | garbage) if own else draw(st.sampled_from(CONFIGS) | garbage)
    )
    own_mutants = list(known.mutants) if known is not None else []
    mutant = (
        draw(st.none() | st.sampled_from(own_mutants + MUTANTS) | garbage)
        if own_mutants
        else draw(st.none() | garbage)
    )
    route = draw(st.sampled_from(["design", "state", "counterexample", "extra", "root"]))
    if route == "counterexample" and mutant in own_mutants and (design != SMALL or config != known.quick):  # type: ignore[union-attr]
        mutant = "no-such-mutant"  # a real search for a big configuration: not in a fuzz example
    params: dict[str, str] = {}
    if mutant is not None:
        params["mutant"] = mutant
    if draw(st.booleans()):
        params["path"] = draw(paths)
    if draw(st.booleans()):
        params["init"] = draw(numbers | garbage)
    segments = {
        "root": [],
        "design": [design],
        "state": [design, config],
        "counterexample": [design, config, "counterexample"],
        "extra": [design, config, draw(garbage), draw(garbage)],
    }[route]
    url = "/" + "/".join(quote(s, safe="") for s in segments)
    if params:
        url += "?" + urlencode(params)
    unknown = (
        design if route in ("design", "state") and known is None and design and "/" not in design else None
    )
    return url, unknown


@pytest.fixture(scope="module")
def client() -> TestClient:
    warnings.filterwarnings("ignore", message=".*httpx.*")
    return TestClient(create_app(), raise_server_exceptions=False)


def check_one(client: TestClient, url: str, unknown: str | None) -> None:
    # Absolute: httpx refuses a relative URL whose path starts "//" (empty segments), which a
    # browser sends as it is.
    response = client.get(str(client.base_url).rstrip("/") + url)
    assert response.status_code < 500, (url, response.status_code, response.text[-400:])
    assert response.headers["content-type"].startswith("text/html"), (url, response.headers)
    if response.status_code >= 400:
        found = ERROR.search(response.text)
        assert found is not None, (url, response.text[-400:])
        message = html.unescape(found.group(1))
        assert len(message) >= 10, (url, message)
        if unknown is not None and unknown.strip() and "." not in unknown:
            assert "design" in message, (url, message)
    else:
        assert response.status_code == 200, (url, response.status_code)


@pytest.mark.timeout(120)
def test_fuzz_serve_urls(client: TestClient) -> None:
    @settings(parent=settings.get_profile(PROFILE))
    @given(urls())
    def prop(drawn: tuple[str, str | None]) -> None:
        check_one(client, *drawn)

    prop()


@pytest.mark.soak
@pytest.mark.timeout(3600)
def test_fuzz_serve_urls_soak(client: TestClient) -> None:
    @settings(parent=settings.get_profile(PROFILE), max_examples=20_000)
    @given(urls())
    def prop(drawn: tuple[str, str | None]) -> None:
        check_one(client, *drawn)

    prop()


def test_the_property_fails_on_a_bare_not_found(client: TestClient) -> None:
    """The check itself: Starlette's bare plain-text 404 (what an unmatched URL used to get) fails it."""
    bare = TestClient(Starlette(routes=[]))
    with pytest.raises(AssertionError):
        check_one(bare, "/a/b/c/d", None)
    check_one(client, "/a/b/c/d", None)


def test_empty_path_segments_get_a_named_not_found(client: TestClient) -> None:
    """A path of empty segments (``////``, found by the long fuzz run) reaches the app and gets its
    HTML 404, not a client-side refusal."""
    check_one(client, "////", None)
    check_one(client, "//work-lane", None)
