"""Plain ``threading`` programs of a seventh outside review (session 40) on per-thread state and
whole-object writes.

* A ``threading.local`` subclass whose object a module made at import: the greenlets of patch mode
  share the real one's namespace (one OS thread), so two threads' own counters were reported as a
  data race, and a worker's first-use initialisation, done in the first execution, was found done
  in every later one (a lost update proved absent; real runs fail 192 times in 200).
* ``obj.__dict__ = {...}`` and ``obj.__class__ = Other`` while another thread reads the object's
  fields or calls its method: the detector saw neither write (each was proved race free).

Each racy program has a locked twin that must stay proved."""

from __future__ import annotations

import contextlib
import threading
import time

from tests.harness.expected import Fails, Races
from tests.harness.program_threads import start_and_join

lock = threading.Lock()


class Ctx(threading.local):
    depth = 0


ctx = Ctx()


def local_subclass_depth() -> None:
    # correct: each thread counts its own depth (the class's 0, then its own namespace's)
    out: dict[int, int] = {}

    def work(i: int) -> None:
        ctx.depth += 1
        with lock:
            pass
        ctx.depth += 1
        with lock:
            out[i] = ctx.depth

    start_and_join(lambda: work(0), lambda: work(1))
    assert out == {0: 2, 1: 2}, out
    assert ctx.depth == 0, ctx.depth  # the main thread's own: the class's


class Registry:
    tls = threading.local()  # reached through a class, not a module's global


settings = {"tls": threading.local(), "registry": Registry.tls}  # and through a dict


def local_reached_depth() -> None:
    # correct: a plain ``threading.local`` made at import where the module's globals only reach
    # it: each thread's namespace is its own, fresh in each execution
    out: dict[int, tuple[int, int]] = {}

    def work(i: int) -> None:
        for tls in (Registry.tls, settings["tls"]):
            tls.depth = getattr(tls, "depth", 0) + 1
        with lock:
            pass
        for tls in (Registry.tls, settings["tls"]):
            tls.depth += 1
        with lock:
            out[i] = (Registry.tls.depth, settings["tls"].depth)

    start_and_join(lambda: work(0), lambda: work(1))
    assert out == {0: (2, 2), 1: (2, 2)}, out
    assert settings["registry"] is Registry.tls  # one object, wherever it is reached


made: list[str] = []  # the hosts of the namespaces ``Conn.__init__`` made


class Conn(threading.local):
    def __init__(self, host: str) -> None:
        self.host = host
        self.used = 0
        with lock:
            made.append(host)


conn = Conn("db")


def local_subclass_init_args() -> None:
    # correct: each thread's first touch runs __init__ again, with the constructor's arguments;
    # the main thread's namespace is the one the import made, as it was then in every execution
    out: list[tuple[str, int]] = []

    def work() -> None:
        conn.used += 1
        with lock:
            pass
        with lock:
            out.append((conn.host, conn.used))

    assert conn.used == 0, conn.used
    with lock:
        before = len(made)
    conn.used += 5
    start_and_join(work, work)
    assert out == [("db", 1), ("db", 1)], out
    assert conn.used == 5, conn.used
    with lock:
        assert made[before:] == ["db", "db"], made  # one per worker


class TLS(threading.local):
    pass


tls = TLS()
shared = {"v": 0}


def local_subclass_stale_init() -> None:
    # buggy: in a fresh thread ``init`` is never set, so the worker's split read-modify-write runs
    # and main's update can fall between its two sections (a lost update)
    def worker() -> None:
        if not hasattr(tls, "init"):
            with lock:
                v = shared["v"]
            time.sleep(0.001)
            with lock:
                shared["v"] = v + 1
            tls.init = True

    t = threading.Thread(target=worker)
    t.start()
    with lock:
        shared["v"] += 10
    t.join()
    assert shared["v"] == 11, shared


class Cfg:
    def __init__(self) -> None:
        self.limit = 1
        self.name = "a"


def _dict_swap(locked: bool, reader_first: bool = False) -> None:
    cfg = Cfg()
    out: list[tuple[int, str]] = []
    guard = lock if locked else contextlib.nullcontext()

    def reload() -> None:
        with guard:
            cfg.__dict__ = {"limit": 2, "name": "b"}

    def read() -> None:
        with guard:
            out.append((cfg.limit, cfg.name))

    start_and_join(*((read, reload) if reader_first else (reload, read)))
    assert out in ([(1, "a")], [(2, "b")]), out


def dict_swap_race() -> None:
    _dict_swap(False)


def dict_swap_race_reader_first() -> None:
    # the swap after the read: the old fields written whole
    _dict_swap(False, reader_first=True)


def dict_swap_locked() -> None:
    _dict_swap(True)


def _dict_swap_by_setattr(locked: bool) -> None:
    cfg = Cfg()
    out: list[int] = []
    guard = lock if locked else contextlib.nullcontext()

    def reload() -> None:
        with guard:
            setattr(cfg, "__dict__", {"limit": 2, "name": "b"})  # noqa: B010

    def write() -> None:
        with guard:
            cfg.limit = 3
            out.append(cfg.limit)

    start_and_join(write, reload)
    assert out == [3], out


def dict_swap_setattr_race() -> None:
    _dict_swap_by_setattr(False)


def dict_swap_setattr_locked() -> None:
    _dict_swap_by_setattr(True)


class Idle:
    def handle(self) -> str:
        return "idle"


class Busy:
    def handle(self) -> str:
        return "busy"


def _class_swap(locked: bool, reader_first: bool = False) -> None:
    m = Idle()
    out: list[str] = []
    guard = lock if locked else contextlib.nullcontext()

    def switch() -> None:
        with guard:
            m.__class__ = Busy  # type: ignore[assignment]

    def call() -> None:
        with guard:
            out.append(m.handle())

    start_and_join(*((call, switch) if reader_first else (switch, call)))
    assert out in (["idle"], ["busy"]), out


def class_swap_race() -> None:
    _class_swap(False)


def class_swap_race_reader_first() -> None:
    # the method looked up before the store: a read of the object's class already
    _class_swap(False, reader_first=True)


def class_swap_locked() -> None:
    _class_swap(True)


class SlottedIdle:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class SlottedBusy:
    __slots__ = ("n",)


def slotted_class_swap_race() -> None:
    # buggy: the class of an object with no ``__dict__`` (its fields are slots) stored while
    # another thread reads a slot, which its class's descriptor serves
    s = SlottedIdle()
    out: list[int] = []

    def switch() -> None:
        s.__class__ = SlottedBusy  # type: ignore[assignment]

    def read() -> None:
        out.append(s.n)

    start_and_join(read, switch)


machine = Idle()  # a state machine made at import, its class its state


def class_swap_at_import_locked() -> None:
    # correct: each execution starts from the import's ``Idle`` (a class stored in one execution
    # was kept for the next, whose first assertion failed)
    assert type(machine) is Idle, type(machine)
    out: list[str] = []

    def switch() -> None:
        with lock:
            machine.__class__ = Busy  # type: ignore[assignment]

    def call() -> None:
        with lock:
            out.append(machine.handle())

    start_and_join(switch, call)
    assert out in (["idle"], ["busy"]), out


FOUND = [
    Fails(local_subclass_stale_init, "assertion", "{'v': 1}"),
    Races(
        dict_swap_race,
        "Cfg.limit and Cfg.__dict__",
        ('cfg.__dict__ = {"limit": 2', "out.append((cfg.limit, cfg.name))"),
    ),
    Races(dict_swap_race_reader_first, "Cfg.__dict__ and Cfg.limit", ('cfg.__dict__ = {"limit": 2',)),
    Races(dict_swap_setattr_race, "Cfg.__dict__ and Cfg.limit", ("setattr(cfg,", "cfg.limit = 3")),
    Races(class_swap_race, "Busy.__class__ and Idle.__class__", ("m.__class__ = Busy", "m.handle()")),
    Races(class_swap_race_reader_first, "Idle.__class__", ("m.__class__ = Busy", "m.handle()")),
    Races(slotted_class_swap_race, "SlottedIdle.__class__", ("s.__class__ = SlottedBusy", "out.append(s.n)")),
]
PROVED = [
    local_reached_depth,
    local_subclass_depth,
    local_subclass_init_args,
    dict_swap_locked,
    dict_swap_setattr_locked,
    class_swap_locked,
    class_swap_at_import_locked,
]
