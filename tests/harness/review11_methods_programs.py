"""Review 11's row 10 (see ``test_review11_methods.py``): a class's method patched with
``mock.patch.object`` (or rebound by the program's own store) in one thread while another calls it
on an object of the class. The look-up of a method found in its class as code was no read, so the
default search took the two threads to commute: "exhaustive, no race"; each locked twin must stay
proved."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from unittest import mock

from tests.harness.program_threads import start_and_join


class Svc:
    def fetch(self) -> str:
        return "real"

    @classmethod
    def create(cls) -> str:
        return "made"


def pause() -> None:
    """A call inside the patch: where a real thread may be switched out."""


def _fake(self: Svc) -> str:
    return "fake"


def _fetch_new() -> str:
    return Svc().fetch()  # (the read each report names)


def _create() -> str:
    return Svc.create()


def _patcher(patching: Any, lock: threading.Lock | None) -> Callable[[], None]:
    def patcher() -> None:
        if lock is not None:
            lock.acquire()
        with patching:  # (where a report names the patch's entry and exit)
            pause()
        if lock is not None:
            lock.release()

    return patcher


def _caller(call: Callable[[], str], got: list[str], lock: threading.Lock | None) -> Callable[[], None]:
    def caller() -> None:
        if lock is None:
            got.append(call())
            return
        with lock:
            got.append(call())

    return caller


def _two_threads(writer: Callable[[], None], reader: Callable[[], None], reader_first: bool = False) -> None:
    start_and_join(*((reader, writer) if reader_first else (writer, reader)))


def class_method_patched() -> None:
    """u07: ``patch.object(Svc, "fetch")`` in one thread, ``Svc().fetch()`` in the other."""
    got: list[str] = []
    patching = mock.patch.object(Svc, "fetch", return_value="fake")
    _two_threads(_patcher(patching, None), _caller(_fetch_new, got, None))
    assert got == ["real"], got


def class_method_patched_reader_first() -> None:
    """The same, the calling thread started first: in the first execution its call precedes the
    patch (the search starts again once the patch is seen)."""
    got: list[str] = []
    patching = mock.patch.object(Svc, "fetch", return_value="fake")
    _two_threads(_patcher(patching, None), _caller(_fetch_new, got, None), reader_first=True)
    assert got == ["real"], got


def class_method_patched_locked() -> None:
    got: list[str] = []
    lock = threading.Lock()
    patching = mock.patch.object(Svc, "fetch", return_value="fake")
    _two_threads(_patcher(patching, lock), _caller(_fetch_new, got, lock))
    assert got == ["real"], got


def _store_rebinder() -> None:
    real = Svc.fetch
    Svc.fetch = _fake  # type: ignore[method-assign]
    pause()
    Svc.fetch = real  # type: ignore[method-assign]


def class_method_rebound_by_store() -> None:
    """The program's own store of a function over the method (neither value is data: even
    ``--strategy dfs`` saw no read)."""
    got: list[str] = []
    _two_threads(_store_rebinder, _caller(_fetch_new, got, None))
    assert got == ["real"], got


def object_method_patched() -> None:
    """``patch.object(svc, "fetch")`` on one shared object: its field shadows the class's method."""
    got: list[str] = []
    svc = Svc()
    patching = mock.patch.object(svc, "fetch", return_value="fake")
    _two_threads(_patcher(patching, None), _caller(lambda: svc.fetch(), got, None))  # (the read)
    assert got == ["real"], got


def classmethod_patched() -> None:
    """``patch.object(Svc, "create")`` while the other thread calls ``Svc.create()`` on the class."""
    got: list[str] = []
    patching = mock.patch.object(Svc, "create", return_value="fake")
    _two_threads(_patcher(patching, None), _caller(_create, got, None))
    assert got == ["made"], got


def _calls_in_a_loop(lock: threading.Lock) -> None:
    svc = Svc()
    for _ in range(30000):
        svc.fetch()
    with lock:
        pass


def rebound_method_called_in_loops() -> None:
    """Correct: main rebinds ``Svc.fetch`` (to itself) before starting two threads that each call
    it 30000 times: its look-ups are reads once a step and site, as a read of code is (each one
    recorded made the check run past its time limit)."""
    Svc.fetch = Svc.__dict__["fetch"]  # type: ignore[method-assign]
    lock = threading.Lock()
    start_and_join(lambda: _calls_in_a_loop(lock), lambda: _calls_in_a_loop(lock))


def local_class_method_patched_locked() -> None:
    """Correct: a class the explored function makes (another object in each execution), its
    method patched under a lock in one thread while the other calls it under the lock."""

    class Local:
        def fetch(self) -> str:
            return "real"

    got: list[str] = []
    lock = threading.Lock()
    patching = mock.patch.object(Local, "fetch", return_value="fake")
    _two_threads(_patcher(patching, lock), _caller(lambda: Local().fetch(), got, lock))
    assert got == ["real"], got


def namedtuple_made_in_threads() -> None:
    """Correct: ``collections.namedtuple`` made in each thread (the library stores its
    ``__new__``'s ``__name__`` and its class's methods: no method of the program rebound)."""
    import collections

    start_and_join(lambda: collections.namedtuple("P", "x y"), lambda: collections.namedtuple("Q", "x"))
