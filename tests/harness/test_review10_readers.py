"""Review 10, rows 8-10: C code handed a reader (``attrgetter``, ``itemgetter``, a ``partial`` of
``getattr``, ``vars`` as ``json.dumps``' default) or handed a list (``numpy.array``) read fields
the race detector never saw, so torn snapshots were proved race free (``race_applied``,
``race_functions.list_loaded``). Row 13: a module lazily imported by two threads was a race
between its body and the second thread's read; the import now orders them (``patch_imports``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result
from model_checks.harness.options import Strategy
from tests.harness import review10_readers_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)


def _run(program: Callable[[], None], strategy: Strategy = "dpor-ipb") -> Result:
    return run_patched(prog, program, options=Options(strategy=strategy, time_limit=60))


# (program, the location reported, the reader's line, the writer's line)
SNAPSHOTS = [
    (prog.attrgetter_pair, "Pair.a", 'lambda p: operator.attrgetter("a", "b")(p)', "p.a = 1"),
    (prog.attrgetter_sum, "Account.bal", 'map(operator.attrgetter("bal"), accts)', "accounts[0].bal -= 1"),
    (prog.itemgetter_pair, "list[0]", "operator.itemgetter(0, 1)(xs)", "xs[0] = 1"),
    (
        prog.json_default_pair,
        "Pair's fields (whole) and Pair.a",
        "lambda p: json.dumps(p, default=vars)",
        "p.a = 1",
    ),
    (prog.getattr_map_pair, "Pair.a", "functools.partial(getattr, p)", "p.a = 1"),
    (prog.numpy_pair, "list (whole) and list[0]", "lambda xs: np.array(xs)", "xs[0] = 1"),
]


def _need(program: Callable[..., None]) -> None:
    if program is prog.numpy_pair:
        pytest.importorskip("numpy")  # (imported before the check: its readers are then listed)


@pytest.mark.parametrize(
    ("program", "what", "read", "write"), SNAPSHOTS, ids=lambda v: getattr(v, "__name__", "")
)
def test_a_torn_snapshot_through_c_code_is_a_race(
    program: Callable[..., None], what: str, read: str, write: str
) -> None:
    _need(program)
    assert_race(_run(program), prog, what, read, write)


@pytest.mark.parametrize("program", [row[0] for row in SNAPSHOTS], ids=lambda p: p.__name__)
def test_the_snapshot_under_the_lock_is_race_free(program: Callable[..., None]) -> None:
    _need(program)
    assert_proved_race_free(_run(lambda: program(locked=True)))


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
@pytest.mark.parametrize(
    "program",
    [prog.lazy_from_import, prog.lazy_import_statement, prog.lazy_import_module],
    ids=lambda p: p.__name__,
)
def test_a_lazy_import_orders_the_module_body_before_the_read(
    program: Callable[[], None], strategy: Strategy
) -> None:
    assert_proved_race_free(_run(program, strategy))


def test_reaching_the_module_without_importing_it_is_still_a_race() -> None:
    assert_race(_run(prog.lazy_import_then_peek), prog, "list (whole)", "seen.append(len(helper.LOADS))")
