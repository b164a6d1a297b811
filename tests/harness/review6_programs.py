"""Plain ``threading`` programs of a sixth outside review (session 39): unsynchronised reads the
race detector did not record, so each racy program was proved race free. A location holding code
(a function, a ``partial``, a bound method, a class) was skipped as "a read of code": a handler
swapped by one thread while another calls it, a function-valued global set by an unlocked lazy
initialisation; a function's own attribute (``handler.enabled``) likewise; ``obj.name()``
(``LOAD_METHOD``) was not traced at all; nor were a class body's and ``exec``'s names
(``LOAD_NAME``/``STORE_NAME``, ``LOAD_CLASSDEREF``) and ``from mod import name``
(``IMPORT_FROM``). Each racy program has a locked twin that must stay proved."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable

from tests.harness import review6_config
from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join

lock = threading.Lock()


def one() -> int:
    return 1


def two() -> int:
    return 2


class Service:
    def __init__(self) -> None:
        self.handler: Callable[[], int] = one


def _swap_while_called(locked: bool) -> None:
    svc = Service()
    out: list[int] = []
    guard = lock if locked else contextlib.nullcontext()

    def call() -> None:
        with guard:
            out.append(svc.handler())

    def swap() -> None:
        with guard:
            svc.handler = two

    start_and_join(call, swap)


def handler_attr_race() -> None:
    _swap_while_called(False)


def handler_attr_locked() -> None:
    _swap_while_called(True)


def partial_attr_race() -> None:
    svc = Service()
    svc.handler = functools.partial(int, "1")
    got: list[int] = []

    def swap() -> None:
        svc.handler = functools.partial(int, "2")

    start_and_join(lambda: got.append(svc.handler()), swap)


def bound_method_attr_race() -> None:
    a: list[int] = []
    b: list[int] = []
    svc = Service()
    svc.sink = a.append  # type: ignore[attr-defined]

    def swap() -> None:
        svc.sink = b.append  # type: ignore[attr-defined]

    start_and_join(lambda: svc.sink(1), swap)  # type: ignore[attr-defined]


strategy: Callable[[], int] = one


def global_fn_race() -> None:
    out: list[bool] = []

    def swap() -> None:
        global strategy
        strategy = two

    start_and_join(lambda: out.append(strategy is two), swap)


def global_fn_locked() -> None:
    out: list[int] = []

    def call() -> None:
        with lock:
            out.append(strategy())

    def swap() -> None:
        global strategy
        with lock:
            strategy = two

    start_and_join(call, swap)


def closure_fn_race() -> None:
    fn = one
    out: list[int] = []

    def swap() -> None:
        nonlocal fn
        fn = two

    start_and_join(lambda: out.append(fn()), swap)


_impl: Callable[[int], int] | None = None


def _fast(x: int) -> int:
    return x + 1


def _get_impl() -> Callable[[int], int]:
    global _impl
    if _impl is None:
        _impl = _fast
    return _impl


def lazy_fn_global_race() -> None:
    global _impl
    _impl = None  # (the module keeps what an earlier test's last execution left)
    start_and_join(lambda: _get_impl()(1), lambda: _get_impl()(2))


def lazy_fn_global_locked() -> None:
    global _impl
    _impl = None

    def use() -> None:
        with lock:
            _get_impl()(1)

    start_and_join(use, use)


def _handled() -> None:
    pass


def function_attr_race() -> None:
    _handled.enabled = True  # type: ignore[attr-defined]
    seen: list[bool] = []

    def off() -> None:
        _handled.enabled = False  # type: ignore[attr-defined]

    start_and_join(lambda: seen.append(_handled.enabled), off)  # type: ignore[attr-defined]


def function_attr_locked() -> None:
    _handled.enabled = True  # type: ignore[attr-defined]
    seen: list[bool] = []

    def read() -> None:
        with lock:
            seen.append(_handled.enabled)  # type: ignore[attr-defined]

    def off() -> None:
        with lock:
            _handled.enabled = False  # type: ignore[attr-defined]

    start_and_join(read, off)


LIMIT = 1


def class_body_global_race() -> None:
    out: list[int] = []

    def make() -> None:
        class Settings:
            limit = LIMIT

        out.append(Settings.limit)

    def change() -> None:
        global LIMIT
        LIMIT = 5

    start_and_join(make, change)


def class_body_global_locked() -> None:
    out: list[int] = []

    def make() -> None:
        with lock:

            class Settings:
                limit = LIMIT

        out.append(Settings.limit)

    def change() -> None:
        global LIMIT
        with lock:
            LIMIT = 5

    start_and_join(make, change)


def class_body_closure_race() -> None:
    n = 1
    out: list[int] = []

    def make() -> None:
        class Settings:
            limit = n

        out.append(Settings.limit)

    def change() -> None:
        nonlocal n
        n = 5

    start_and_join(make, change)


def exec_globals_race() -> None:
    def bump() -> None:
        exec("LIMIT += 1", globals())

    start_and_join(bump, bump)


def exec_globals_locked() -> None:
    def bump() -> None:
        with lock:
            exec("LIMIT += 1", globals())

    start_and_join(bump, bump)


def import_from_race() -> None:
    out: list[int] = []

    def read() -> None:
        from tests.harness.review6_config import limit

        out.append(limit)

    def change() -> None:
        review6_config.limit = 5

    start_and_join(read, change)


def import_from_locked() -> None:
    out: list[int] = []

    def read() -> None:
        with lock:
            from tests.harness.review6_config import limit

        out.append(limit)

    def change() -> None:
        with lock:
            review6_config.limit = 5

    start_and_join(read, change)


def module_function_calls_locked() -> None:
    """A module's function called in a loop under a lock: read once a step, and no race."""
    total: list[int] = [0]

    def add() -> None:
        with lock:
            for _ in range(20):
                total[0] = _fast(total[0])

    start_and_join(add, add)


FOUND = [
    Races(handler_attr_race, "Service.handler", ("out.append(svc.handler())", "svc.handler = two")),
    Races(partial_attr_race, "Service.handler", ("got.append(svc.handler())",)),
    Races(bound_method_attr_race, "Service.sink", ("svc.sink(1)",)),
    Races(global_fn_race, "global strategy", ("out.append(strategy is two)", "strategy = two")),
    Races(closure_fn_race, "closure variable fn", ("out.append(fn())", "fn = two")),
    Races(lazy_fn_global_race, "global _impl", ("_impl = _fast",)),
    Races(function_attr_race, "function.enabled", ("_handled.enabled = False",)),
    Races(class_body_global_race, "global LIMIT", ("limit = LIMIT", "LIMIT = 5")),
    Races(class_body_closure_race, "closure variable n", ("limit = n", "n = 5")),
    Races(exec_globals_race, "global LIMIT"),  # at <string>:1, the exec'd source
    Races(import_from_race, "global limit", ("review6_config.limit = 5",)),
]
PROVED = [
    handler_attr_locked,
    global_fn_locked,
    lazy_fn_global_locked,
    function_attr_locked,
    class_body_global_locked,
    exec_globals_locked,
    import_from_locked,
    module_function_calls_locked,
]
