"""The data-race detector where the tracer does not see the access itself (session 37, each proved
"exhaustive (for a data-race-free program)" before): a container's method handed to a thread, a
timer or a pool; the standard library's algorithms written in Python (``Counter.update``,
``ChainMap``, ``heapq.nsmallest``, ``statistics.mean``, ``dataclasses.replace``, ``copy.copy``);
an object's fields read whole (``vars(obj)``, ``copy.copy``, ``pickle.dumps``); a container's
truth (``if not pending:``) and C code that reads a container (``deque(xs)``, ``list.append(xs, 9)``,
``yield from xs``, ``itertools.islice``). A report names the program's line, not the library's."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import race_library, race_sites
from tests.harness import race_library_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

run = partial(run_patched, prog)

# Each racy program, the location its report names and the program's lines it names.
RACY = [
    pytest.param(
        prog.thread_target_append,
        "list (whole)",
        ["target=xs.append", "lambda: sum(xs)"],
        id="a_containers_method_as_a_threads_target",
    ),
    pytest.param(
        prog.partial_target,
        "list (whole)",
        ["partial(heapq.heappush", "heap[:1]"],
        id="a_partial_of_a_library_function_as_a_target",
    ),
    pytest.param(
        prog.timer_function,
        "dict['a'] and dict (whole)",
        ["threading.Timer(0.0, d.update", 'd.get("a")'],
        id="a_containers_method_as_a_timers_function",
    ),
    pytest.param(
        prog.pool_update,
        "dict (whole)",
        ["pool.submit(d.update, {", "lambda: len(d)"],
        id="a_containers_method_submitted_to_a_pool",
    ),
    pytest.param(
        prog.counter_update,
        "Counter (whole)",
        ['lambda: c.update(["a"])'],
        id="counter_update_writes_the_counter",
    ),
    pytest.param(
        prog.chain_map_write,
        "dict['a']",
        ['cm["a"] = 1', 'first.get("a")'],
        id="a_chain_map_writes_its_first_map",
    ),
    pytest.param(
        prog.nsmallest_race,
        "list (whole)",
        ["heapq.nsmallest(2, xs)", "xs.append(0)"],
        id="heapq_nsmallest_reads_its_argument",
    ),
    pytest.param(
        prog.mean_race,
        "list (whole)",
        ["statistics.mean(xs)", "xs.append(3.0)"],
        id="statistics_mean_reads_its_argument",
    ),
    pytest.param(
        prog.dataclass_replace_race,
        "Point.x",
        ["dataclasses.replace(p, y=2)", "p.x = 1"],
        id="dataclasses_replace_reads_every_field",
    ),
    pytest.param(
        prog.copy_object_race,
        "Plain.value and Plain's fields (whole)",
        ["copy.copy(obj)", "obj.value = 1"],
        id="copy_of_an_object_reads_its_fields",
    ),
    pytest.param(
        prog.vars_race,
        "Plain.value",
        ["lambda: vars(obj)", "obj.value = 2"],
        id="vars_of_an_object_is_its_attributes",
    ),
    pytest.param(
        prog.pickle_object_race,
        "Plain.value and Plain's fields (whole)",
        ["lambda: pickle.dumps(obj)", "obj.value = 3"],
        id="pickling_an_object_reads_its_fields",
    ),
    pytest.param(
        prog.emptiness_check, "list (whole)", ["idle = not pending", 'pending.append("job")'], id="not_xs"
    ),
    pytest.param(prog.truth_in_a_loop, "list (whole)", ["while xs and n < 3"], id="while_xs"),
    pytest.param(
        prog.truth_of_a_dict_or, "dict['a'] and dict (whole)", ["lambda: d or None"], id="d_or_default"
    ),
    pytest.param(
        prog.deque_copy_race, "list (whole)", ["lambda: collections.deque(xs)"], id="a_deque_made_from_a_list"
    ),
    pytest.param(
        prog.unbound_method_race, "list (whole)", ["lambda: list.append(xs, 9)"], id="an_unbound_method"
    ),
    pytest.param(prog.yield_from_race, "list (whole)", ["yield from xs\n"], id="yield_from"),
    pytest.param(prog.islice_race, "list (whole)", ["lambda: list(itertools.islice"], id="itertools_islice"),
    pytest.param(
        prog.iterator_next_race,
        "list_iterator",
        ["lambda: next(shared_iterator"],
        id="next_of_a_shared_iterator",
    ),
    pytest.param(
        prog.iterator_and_writer_race,
        "list (whole)",
        ["for _ in it:", "lambda: xs.append(2)"],
        id="loop_over_an_iterator",
    ),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("program", "what", "sites"), RACY)
def test_an_access_made_out_of_sight_is_a_race(
    program: Callable[[], object], what: str, sites: list[str]
) -> None:
    assert_race(run(program), prog, what, *sites)


@pytest.mark.timeout(60)
def test_a_library_access_is_told_by_the_call_the_program_made() -> None:
    failure = assert_race(run(prog.mean_race), prog, "list (whole)")
    assert "read (mean())" in failure.message, failure.message
    assert "statistics.py" not in failure.message, failure.message


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "program",
    [
        prog.thread_target_append_joined,
        prog.pool_map_locked,
        prog.counter_update_locked,
        prog.copy_object_locked,
        prog.own_fields_per_thread,
        prog.truth_locked,
        prog.local_loops_per_thread,
    ],
    ids=lambda p: p.__name__,
)
def test_race_free_versions_are_proved(program: Callable[[], object]) -> None:
    result = run(program)
    assert_proved_race_free(result)
    assert result.races  # the detector ran in every execution


def test_only_the_listed_library_modules_are_traced() -> None:
    """The standard library's own state stays unchecked: a traced module is an algorithm over the
    caller's data, and its globals and the containers among them are exempt."""
    import collections
    import copy
    import logging
    import threading

    assert race_sites.under_test(collections.__file__)
    assert not race_sites.under_test(logging.__file__)
    assert not race_sites.under_test(threading.__file__)
    state = race_library.library_state()
    assert id(copy._copy_dispatch) in state  # type: ignore[attr-defined]
    assert id(collections.__dict__) in state
