"""Checks of plain ``threading`` programs in patch mode, shared by the race and patch-mode tests
(test_patched_catalogue.py, test_races.py, test_race_scopes.py, test_patch_imported.py, test_patch_stdlib.py,
test_patch_types.py, test_fair_sleeps.py, the review tests): run a program of a module under
``patched(module)``, make a module from source text, find a line of its source, hold a proof to
the outcomes it saw, a failure to its kind and words, and a data-race report to the sites it
must name."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.options import Failure

# What a proof of a racy-looking program says (the rest names the granularity).
DRF = "exhaustive (for a data-race-free program"


def run_patched(module: ModuleType, program: Callable[[], object], **options: object) -> Result:
    """``check`` the plain program ``program()`` with ``module`` patched; ``options`` as for ``check``."""
    with patched(module):
        return check(lambda rt: program(), **options)  # type: ignore[arg-type]


def run_with_outcomes(module: ModuleType, program: Callable[[], object], **options: object) -> Result:
    """``check`` the plain program ``program()`` with ``module`` patched, each execution's outcome
    what it returned (60 s unless ``options`` say otherwise)."""

    def test(rt: object) -> Callable[[], object]:
        value = program()
        return lambda: value

    with patched(module):
        return check(test, Options(**{"time_limit": 60, **options}))  # type: ignore[arg-type]


def module_from_source(source: str, name: str, filename: str) -> ModuleType:
    """A module called ``name`` whose code is ``source``, compiled as the file ``filename``: a
    program with no file, for asking what patching would replace in it (``at_patching``)."""
    module = ModuleType(name)
    exec(compile(source, filename, "exec"), vars(module))
    return module


def source_line(module: ModuleType, text: str) -> str:
    """``file.py:N``, the first line of ``module``'s source that holds ``text``, as a report names it."""
    path = module.__file__
    assert path is not None, module
    with open(path) as fh:
        for i, src in enumerate(fh, 1):
            if text in src:
                return f"{os.path.basename(path)}:{i}"
    raise AssertionError(text)


def assert_outcomes(result: Result, outcomes: set[object]) -> None:
    """An exhaustive verdict whose executions returned, all told, exactly ``outcomes``."""
    assert result.verdict == "exhaustive", result.report()
    assert result.outcomes == outcomes, result.report()


def assert_fails(result: Result, kind: str, *words: str) -> Failure:
    """The check failed with a failure of ``kind`` whose message holds each of ``words``."""
    assert result.verdict == "failed", result.report()
    failure = result.failure
    assert failure is not None and failure.kind == kind, result.report()
    for word in words:
        assert word in failure.message, (word, failure.message)
    return failure


def assert_reported(result: Result, kind: str, *words: str) -> None:
    """The check failed with a failure of ``kind`` and its whole report (trace, stacks, notes)
    holds each of ``words``."""
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == kind, result.report()
    for word in words:
        assert word in result.report(), result.report()


def assert_race(result: Result, module: ModuleType, what: str, *sites: str) -> Failure:
    """The check failed with a data race on ``what`` whose report names, for each text of
    ``sites``, the line of ``module`` that holds it; the failure carries its schedule."""
    failure = assert_fails(result, "data_race", f"data race on {what}:")
    for site in sites:
        assert source_line(module, site) in failure.message, (site, failure.message)
    assert failure.schedule.startswith("lc1."), failure.schedule
    return failure


def assert_proved_race_free(result: Result) -> None:
    """An exhaustive verdict that says it proves the program free of data races."""
    assert result.verdict == "exhaustive", result.report()
    assert result.summary().startswith(DRF), result.summary()


def assert_proved_returning(result: Result, outcome: object, executions: int) -> None:
    """Proved free of data races, every execution returning ``outcome``, in at least
    ``executions`` executions (so the threads did interleave)."""
    assert_proved_race_free(result)
    assert_outcomes(result, {outcome})
    assert result.executions >= executions, result.report()
