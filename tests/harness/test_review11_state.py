"""The eleventh outside review's findings on state kept from one execution to the next (session
43, ``review11_state_programs.py``): the registry of warnings already shown survived the first
execution, so a "default"-action warning was silent in every later one (row 2, u06: ``--strategy
dfs`` could not show the bad order); a ``contextvars`` context made at import was no operation
when two threads entered it (row 3, u05: DPOR proved a program failing in every real run)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import patch_context, patch_warnings
from tests.harness import review11_state_programs as prog
from tests.harness.patched_runs import assert_outcomes, module_from_source, run_with_outcomes

pytestmark = pytest.mark.timeout(180)

_run = partial(run_with_outcomes, prog)


def _registry() -> dict[object, object]:
    return dict(vars(prog).get("__warningregistry__", {}))


@pytest.mark.parametrize("strategy", ["dfs", "dpor-ipb"])
def test_each_execution_shows_a_default_warning_anew(strategy: str) -> None:
    """Two threads warn from one line: shown once in every execution, as in a real (first) run;
    the first execution's registry hid it from every later one (outcomes {0, 1})."""
    vars(prog).pop("__warningregistry__", None)
    result = _run(prog.shown_once, strategy=strategy)
    assert_outcomes(result, {1})
    assert result.executions > 1, result.report()


def test_a_registry_current_at_the_checks_start_is_kept() -> None:
    """A warning already shown before the check (the registry current, with its entry) stays
    shown in every execution: the registries start as at the check's start, not empty."""
    with warnings.catch_warnings(record=True):
        pass  # (the filters version moves: the registry made below is current)
    vars(prog).pop("__warningregistry__", None)
    saved = warnings.showwarning
    warnings.showwarning = lambda *args, **kwargs: None
    try:
        prog._warn()
    finally:
        warnings.showwarning = saved
    before = _registry()
    assert len(before) == 2 and patch_warnings._version() == before.pop("version")
    result = _run(prog.shown_once, strategy="dfs")
    assert_outcomes(result, {0})
    after = _registry()  # (its entries, made current again: the version now)
    assert patch_warnings._version() == after.pop("version") and after == before


def test_dfs_finds_a_warning_captured_by_logging_in_another_thread() -> None:
    """u06 (BUGGY): under ``--strategy dfs`` B's warning lands in A's ``py.warnings`` logger in
    some order; with the registry kept, B's warning was silent after the first execution."""
    vars(prog).pop("__warningregistry__", None)
    result = _run(prog.captured_warning, strategy="dfs")
    assert_outcomes(result, {False, True})


@pytest.mark.parametrize(
    ("program", "outcomes"),
    [(prog.context_at_import, {0, 1}), (prog.context_at_import_counted, {2})],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor"])
def test_a_context_made_at_import(
    program: Callable[[], object], outcomes: set[object], strategy: str
) -> None:
    """u05 (BUGGY): the second thread's ``run`` inside the first's raises (DPOR ran one order);
    and each execution starts with the context's variables as at the check's start (a kept one
    counted on from the last execution's value)."""
    result = _run(program, strategy=strategy)
    assert_outcomes(result, outcomes)
    assert prog._VAR not in prog.CTX


_HELD_AT_IMPORT = {
    "a global": "CTX = contextvars.copy_context()",
    "in a dict": "HOLDER = {'ctx': contextvars.copy_context()}",
    "a field of its object": "class Box:\n    pass\nBOX = Box()\nBOX.ctx = contextvars.copy_context()",
    "a field of its class": "class Box:\n    ctx = contextvars.copy_context()",
}


@pytest.mark.parametrize("where", sorted(_HELD_AT_IMPORT))
def test_a_context_held_at_import_turns_the_operation_on(where: str) -> None:
    """The program's functions only ``run`` it (``use`` names neither ``copy_context`` nor
    ``Context``): holding one made at import is enough; holding none, nothing is replaced."""
    source = f"import contextvars\n{_HELD_AT_IMPORT[where]}\ndef use(c):\n    return c.run(len, [])\n"
    held = module_from_source(source, "review11_held", "review11_held.py")
    assert [name for _, name, _, _ in patch_context.at_patching((held,))] == ["run"]
    none = module_from_source("import contextvars\ndef use(c):\n    return c.run(len, [])\n", "n", "n.py")
    assert patch_context.at_patching((none,)) == []
