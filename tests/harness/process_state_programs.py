"""Programs whose threads share process-wide state that no traced access and no operation shows
(``process_watch``; docs/harness.md, "Process-wide state"): the C locale, the collector's switch
turned by a library, a library module's names, ``sys.modules``, the builtins' dict, the C
environment, a resource limit, the codec registry, a file's name; and the twelfth review's
(``faulthandler``, ``decimal.DefaultContext``, ``linecache.cache``, ``tracemalloc``, the effective
group id, a ``chdir`` through ``ctypes``, a library class's method, ``socket``'s default timeout).

Each ``window`` program: ``a`` changes the state, waits for the gate main holds, and undoes the
change; ``b`` reads the state; main releases the gate only after starting both. The first
schedule (main to its join, then ``a``, then ``b``) reads the state as it was; only a search that
puts ``b`` inside ``a``'s window sees it changed. Each execution returns what ``b`` read.
"""

from __future__ import annotations

import builtins
import codecs
import ctypes
import decimal
import faulthandler
import gc
import json
import linecache
import locale
import mimetypes
import os
import resource
import socket
import sys
import tempfile
import threading
import time
import timeit
import tracemalloc
import types
from collections.abc import Callable
from unittest import mock

from tests.harness.program_threads import start_and_join, start_then_release

GATE = threading.Lock()
INNER = threading.Lock()
SEEN: list[object] = []
WHERE = os.path.join(tempfile.gettempdir(), f"lanecheck-process-state-{os.getpid()}")


def _wait_for_gate() -> None:
    with GATE:
        pass


def window(
    change: Callable[[], object], undo: Callable[[], object], read: Callable[[], object]
) -> Callable[[], object]:
    def a() -> None:
        change()
        _wait_for_gate()
        undo()

    def b() -> None:
        SEEN.append(read())

    def main() -> object:
        SEEN.clear()
        GATE.acquire()
        start_then_release(GATE, a, b)
        return SEEN[0]

    return main


def locked(
    change: Callable[[], object], undo: Callable[[], object], read: Callable[[], object]
) -> Callable[[], object]:
    """The same, with ``b``'s read under the gate too: it never falls inside the window."""

    def read_locked() -> object:
        with GATE:
            return read()

    def change_locked() -> None:
        with GATE:
            change()
            with INNER:  # (a step ends with the change made: another thread could run here)
                pass
            undo()

    def main() -> object:
        SEEN.clear()
        start_and_join(change_locked, lambda: SEEN.append(read_locked()))
        return SEEN[0]

    return main


# the C locale: another category name than the one the process has
_ORIGINAL_CTYPE = locale.setlocale(locale.LC_CTYPE)
OTHER_CTYPE = "C" if _ORIGINAL_CTYPE != "C" else "C.UTF-8"


def _ctype() -> str:
    return locale.setlocale(locale.LC_CTYPE)


locale_window = window(
    lambda: locale.setlocale(locale.LC_CTYPE, OTHER_CTYPE),
    lambda: locale.setlocale(locale.LC_CTYPE, _ORIGINAL_CTYPE),
    _ctype,
)
locale_locked = locked(
    lambda: locale.setlocale(locale.LC_CTYPE, OTHER_CTYPE),
    lambda: locale.setlocale(locale.LC_CTYPE, _ORIGINAL_CTYPE),
    _ctype,
)


def _timed_window() -> None:
    # ``timeit`` turns the collector off around the timed call (the library's code, not ours)
    timeit.timeit(_wait_for_gate, number=1)


def gc_by_library() -> object:
    SEEN.clear()
    GATE.acquire()
    start_then_release(GATE, _timed_window, lambda: SEEN.append(gc.isenabled()))
    return SEEN[0]


_DOUBLE = types.ModuleType("json")
_SAVED_DIR = tempfile.gettempdir()
_REAL_ASCII = builtins.ascii
_LIMIT = resource.getrlimit(resource.RLIMIT_NOFILE)


def _search(name: str) -> codecs.CodecInfo | None:
    return codecs.lookup("utf-8") if name == "lanecheck_test_codec" else None


def _codec_found() -> bool:
    try:
        codecs.lookup("lanecheck_test_codec")
    except LookupError:
        return False
    return True


_GETENV = ctypes.CDLL(None).getenv  # the C library's (``os.putenv`` changes it, not ``os.environ``)
_GETENV.restype = ctypes.c_char_p


def _c_getenv() -> bytes | None:
    value: bytes | None = _GETENV(b"LANECHECK_PROCESS_STATE")
    return value


def _swap_module(value: object) -> None:
    sys.modules["json"] = value  # type: ignore[assignment]


tempdir_window = window(
    lambda: setattr(tempfile, "tempdir", WHERE),
    lambda: setattr(tempfile, "tempdir", _SAVED_DIR),
    tempfile.gettempdir,
)
modules_window = window(
    lambda: _swap_module(_DOUBLE), lambda: _swap_module(json), lambda: __import__("json") is _DOUBLE
)
builtins_window = window(
    lambda: vars(builtins).__setitem__("ascii", lambda _x: "double"),
    lambda: vars(builtins).__setitem__("ascii", _REAL_ASCII),
    lambda: ascii("x"),
)
environ_window = window(
    lambda: os.putenv("LANECHECK_PROCESS_STATE", "set"),
    lambda: os.unsetenv("LANECHECK_PROCESS_STATE"),
    _c_getenv,
)
limit_window = window(
    lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (_LIMIT[0] - 1, _LIMIT[1])),
    lambda: resource.setrlimit(resource.RLIMIT_NOFILE, _LIMIT),
    lambda: resource.getrlimit(resource.RLIMIT_NOFILE)[0],
)
codec_window = window(lambda: codecs.register(_search), lambda: codecs.unregister(_search), _codec_found)

# (an execution the search stops inside the window leaves the file aside: the next execution
# starts with it back, ``patch_renames.start_execution``)
rename_window = window(
    lambda: os.rename(WHERE, WHERE + ".aside"),
    lambda: os.rename(WHERE + ".aside", WHERE),
    lambda: os.path.exists(WHERE),
)


def _set_ctype_for_good() -> None:  # (reads, then changes)
    SEEN.append(_ctype())
    locale.setlocale(locale.LC_CTYPE, OTHER_CTYPE)


def reader_first() -> object:
    """``b`` reads the locale, ``a`` then changes it for good; ``b`` is started first, so the first
    schedule reads it unchanged: only running ``a``'s change before ``b``'s read (a race found
    when the change is seen, after the read) shows the other value."""
    SEEN.clear()
    start_and_join(lambda: SEEN.append(_ctype()), _change_ctype)
    return SEEN[0]


def writer_first() -> object:
    """The same threads, ``a`` started first: the first schedule reads the changed locale; the
    other order needs ``a`` to run after ``b``'s step, though ``a``'s step was explored first
    there and ``b``'s operations touch nothing ``a``'s do (a sleep set must not keep ``a`` asleep)."""
    SEEN.clear()
    start_and_join(_change_ctype, lambda: SEEN.append(_ctype()))
    return SEEN[0]


def _change_ctype() -> None:
    locale.setlocale(locale.LC_CTYPE, OTHER_CTYPE)


def each_run_starts_afresh() -> object:
    """One thread reads the locale and changes it for good: each execution must read the one the
    check started with (put back after each), as each real run would."""
    SEEN.clear()
    start_and_join(_set_ctype_for_good)
    return SEEN[0]


def _parse_date(n: int) -> None:
    # ``time.strptime`` imports ``_strptime`` at its first call (C code): in the check's first
    # execution only, unless each execution imports it afresh
    parsed = time.strptime(f"2024-01-0{n + 1}", "%Y-%m-%d")
    with GATE:
        SEEN.append(parsed.tm_mday)


def strptime_in_threads() -> object:
    SEEN.clear()
    start_and_join(lambda: _parse_date(0), lambda: _parse_date(1))
    return tuple(sorted(SEEN))  # type: ignore[type-var]


def _temp_folder() -> None:
    folder = tempfile.gettempdir()
    with GATE:
        SEEN.append(folder)


def gettempdir_in_threads() -> object:
    """Two threads' first ``gettempdir()``: ``tempfile`` makes its folder under a real lock whose
    holder draws names (scheduling points)."""
    SEEN.clear()
    start_and_join(_temp_folder, _temp_folder)
    return len(SEEN)


_INTERVAL = sys.getswitchinterval()
switch_interval_window = window(
    lambda: sys.setswitchinterval(_INTERVAL * 2),
    lambda: sys.setswitchinterval(_INTERVAL),
    sys.getswitchinterval,
)
mimetypes.init()
mimetype_window = window(
    lambda: mimetypes.add_type("application/x-lanecheck", ".lcw"),
    lambda: mimetypes.types_map.pop(".lcw"),
    lambda: mimetypes.guess_type("f.lcw")[0],
)


# the twelfth review's windows, still proved before the readers, templates and hooks of the watch
_FAULTS = faulthandler.is_enabled()  # (pytest turns it on)


def _faults(on: bool) -> None:
    if on:
        faulthandler.enable()
    else:
        faulthandler.disable()


faulthandler_window = window(lambda: _faults(not _FAULTS), lambda: _faults(_FAULTS), faulthandler.is_enabled)
_PREC = decimal.DefaultContext.prec
decimal_window = window(
    lambda: setattr(decimal.DefaultContext, "prec", 5),
    lambda: setattr(decimal.DefaultContext, "prec", _PREC),
    lambda: decimal.Context().prec,  # (a new context copies the template)
)
_MINE = __file__
linecache_window = window(
    lambda: linecache.cache.__setitem__(_MINE, (1, None, ["cached\n"], _MINE)),
    lambda: linecache.cache.pop(_MINE),
    lambda: linecache.getline(_MINE, 1),
)
tracemalloc_window = window(tracemalloc.start, tracemalloc.stop, tracemalloc.is_tracing)
egid_window = window(lambda: os.setegid(1), lambda: os.setegid(0), os.getegid)
_CHDIR = ctypes.CDLL(None).chdir  # (looked up now: the calls raise no audit event)
_CWD = os.getcwd()
ctypes_chdir_window = window(lambda: _CHDIR(b"/"), lambda: _CHDIR(_CWD.encode()), os.getcwd)
_DECODE = json.JSONDecoder.decode


def _decode(self: json.JSONDecoder, s: str) -> object:
    return "patched"


json_method_window = window(
    lambda: setattr(json.JSONDecoder, "decode", _decode),
    lambda: setattr(json.JSONDecoder, "decode", _DECODE),
    lambda: json.loads("1"),
)
_PATCHER = mock.patch.object(json.JSONDecoder, "decode", _decode)
json_mock_window = window(_PATCHER.start, _PATCHER.stop, lambda: json.loads("1"))
_TIMEOUT = socket.getdefaulttimeout()
socket_timeout_window = window(
    lambda: getattr(socket, "setdefaulttimeout")(5.0),  # noqa: B009 (the name a patch could see)
    lambda: getattr(socket, "setdefaulttimeout")(_TIMEOUT),  # noqa: B009
    socket.getdefaulttimeout,
)
