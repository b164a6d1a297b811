"""The ASGI app of `lanecheck serve` (Starlette): the designs, one state per URL, counterexamples.

Routes:

* ``/`` — the registered designs, their configurations and mutants;
* ``/DESIGN`` — redirects to its default configuration (the mutant's own with ``?mutant=M``);
* ``/DESIGN/CONFIG?mutant=M&init=I&path=3.0.1`` — one state, reached by that path;
* ``/DESIGN/CONFIG/counterexample?mutant=M`` — redirects to the last state of the explorer's
  shortest counterexample.

Bad input is a 4xx page naming it — an unknown name 404, a path that is no behaviour of the spec
(malformed or stale) 404 naming the step, a configuration the spec refuses 400 — never a 500.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from model_checks.registry import designs
from model_checks.serve import pages
from model_checks.serve import walk as w
from model_checks.serve.shortest import Found, cached, shortest
from model_checks.serve.subject import NotFound, Subject, default_config, subject
from spec.language import SpecError


def _error(status: int, message: str, links: list[tuple[str, str]] | None = None) -> HTMLResponse:
    return HTMLResponse(pages.error_page(status, message, links or []), status_code=status)


def _subject(request: Request) -> Subject | HTMLResponse:
    """The page's subject, or the error page for an unknown one (404) or a bad config (400)."""
    mutant = request.query_params.get("mutant") or None
    try:
        return subject(request.path_params["design"], request.path_params["config"], mutant)
    except NotFound as problem:
        return _error(404, problem.message)
    except SpecError as problem:
        return _error(400, str(problem))


async def index(request: Request) -> Response:
    table = {name: (d.summary, d.quick, list(d.configs), list(d.mutants)) for name, d in designs().items()}
    return HTMLResponse(pages.index_page(table))


async def design_home(request: Request) -> Response:
    name = request.path_params["design"]
    mutant = request.query_params.get("mutant") or None
    try:
        config = default_config(name, mutant)
    except NotFound as problem:
        return _error(404, problem.message)
    return RedirectResponse(pages.location(name, config, mutant), status_code=303)


def explore(request: Request) -> Response:
    # sync: replaying a path is CPU work, run in Starlette's thread pool off the event loop
    subj = _subject(request)
    if isinstance(subj, HTMLResponse):
        return subj
    start = pages.href(subj)
    try:
        path = w.parse(request.query_params.get("path"))
        init = w.parse_init(request.query_params.get("init"))
    except w.BadPath as problem:
        return _error(400, f"path: {problem}", [(start, "the initial state")])
    try:
        walked = w.replay(subj.instance, init, path)
    except w.BadPath as problem:
        # the longest prefix that is a behaviour, so a stale link still gets somewhere
        if problem.step:
            back = (pages.href(subj, init, path[: problem.step - 1]), f"the state before step {problem.step}")
        else:
            back = (start, "the first initial state")
        return _error(404, f"path: {problem}", [back])
    d = designs()[subj.design]
    page = pages.explorer_page(subj, walked, list(d.configs), list(d.mutants), cached(subj))
    return HTMLResponse(page)


def counterexample(request: Request) -> Response:
    subj = _subject(request)
    if isinstance(subj, HTMLResponse):
        return subj
    if subj.mutant is None:
        return _error(
            404,
            f"{subj.design} [{subj.config}] is the design's spec: no seeded bug, so no counterexample "
            "to jump to (add ?mutant=NAME)",
            [(pages.href(subj), "its initial state")],
        )
    found = shortest(subj)
    if not isinstance(found, Found):
        return _error(
            404, f"{subj.title}: no counterexample: {found.reason}", [(pages.href(subj), "explore")]
        )
    return RedirectResponse(pages.href(subj, found.init, found.path), status_code=303)


ROUTES = "/, /DESIGN, /DESIGN/CONFIG and /DESIGN/CONFIG/counterexample"


async def no_route(request: Request, problem: Exception) -> Response:
    """A URL no route takes (or a method it does not serve): the page names it, like every refusal."""
    status = problem.status_code if isinstance(problem, HTTPException) else 404
    if status == 405:
        return _error(405, f"{request.method} is not served: the explorer only answers GET")
    shown = request.url.path if len(request.url.path) <= 200 else request.url.path[:200] + "..."
    return _error(status, f"no page at {shown}: the pages are {ROUTES}")


def create_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/", index),
            Route("/{design}", design_home),
            Route("/{design}/{config}", explore),
            Route("/{design}/{config}/counterexample", counterexample),
        ],
        exception_handlers={404: no_route, 405: no_route},
    )
