"""An access whose argument needs an ``EXTENDED_ARG`` prefix (an attribute name past the 256th of
its function, a global past the 128th) is seen: CPython 3.11 gives such an instruction no trace
event of its own, only its prefix one (docs/harness.md, "Data races")."""

from __future__ import annotations

import dis
import itertools
from collections.abc import Callable
from typing import Any

import pytest

from model_checks.harness import check
from model_checks.harness.race_sites import LOAD_ATTR, STORE_ATTR, code_table
from model_checks.harness.runtime import ControlledRuntime
from tests.harness.test_race_tracer import tracer  # noqa: F401  (the fixture: each trace function)


def _bump_past_256_names() -> Callable[[Any], None]:
    # 300 attribute names the function never reaches come first in co_names, so ``target``'s
    # load and store carry an index above 255: an EXTENDED_ARG prefix each
    unused = "".join(f"        obj.a{i}\n" for i in range(300))
    source = f"def bump(obj):\n    if obj is None:\n{unused}    obj.target = obj.target + 1\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, "<race-extended-arg>", "exec"), namespace)
    bump: Callable[[Any], None] = namespace["bump"]
    return bump


BUMP = _bump_past_256_names()


class Box:
    def __init__(self) -> None:
        self.target = 0


def test_the_access_is_keyed_at_its_prefix() -> None:
    instructions = list(dis.get_instructions(BUMP.__code__))
    prefixed = [
        (before.offset, ins.opname)
        for before, ins in itertools.pairwise(instructions)
        if before.opname == "EXTENDED_ARG" and ins.argval == "target"
    ]
    assert [name for _, name in prefixed] == ["LOAD_ATTR", "STORE_ATTR"], prefixed
    table = code_table(BUMP.__code__)
    assert table is not None
    assert [table.get(offset) for offset, _ in prefixed] == [(LOAD_ATTR, "target"), (STORE_ATTR, "target")]


def _two_bumps(locked: bool) -> Callable[[ControlledRuntime], None]:
    def program(rt: ControlledRuntime) -> None:
        box = Box()
        lock = rt.lock()

        def one() -> None:
            if locked:
                with lock:
                    BUMP(box)
            else:
                BUMP(box)

        threads = [rt.start_thread(one, f"t{i}") for i in range(2)]
        for t in threads:
            t.join()

    return program


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("tracer")
def test_a_lost_update_behind_extended_args_is_a_race() -> None:
    racy = check(_two_bumps(locked=False), races=True)
    assert racy.failure is not None and racy.failure.kind == "data_race", racy.report()
    assert "Box.target" in racy.failure.message
    locked = check(_two_bumps(locked=True), races=True)
    assert locked.verdict == "exhaustive", locked.report()
