"""Which code in the harness's folder is the harness's own, and which is code under test.

The folder holds both: the machinery (the scheduler, the primitives' model, the strategies, the
drivers that run a search) and programs under test (``examples.py``; ``lane_programs.py`` and
``lane_posts.py``, the steps the lane designs' scenarios share; ``drain_watch.py``, the check they
share, a scenario's invariant as a design's own checks are).
Three readers ask, each for its own reason:

* the source of an operation and a blocked thread's stack (``rt/ending.py``): the user's lines,
  past the machinery and the wrappers of ``patch.py``, ``patch_local.py``, ``patch_imported.py``
  and ``logged_steps.py``,
  and past the steps the lane designs' scenarios share, so that a report names the scenario's line;
* the state fingerprint (``rt/fingerprint.py``): a thread's frames and a program's globals are
  state, the machinery's are not; the wrappers run on a program's behalf (``Thread.run`` calls
  its target), so their frames are state and their globals bookkeeping;
* the race detector (``race_sites.py``): it traces code under test only.

The machinery is named file by file, not by folder: a file named nowhere here is code under test
to every reader, which costs pruning or a noisier report, never soundness (taking
``examples.py`` for machinery made every thread of ``examples.bounded_buffer`` look frameless:
issue 16's false livelock). ``tests/harness/test_own_code.py`` checks that every module of the
folder is named.
"""

from __future__ import annotations

import os

HARNESS = os.path.dirname(os.path.abspath(__file__)) + os.sep

MACHINERY_DIRS = tuple(HARNESS + d + os.sep for d in ("rt", "sync", "strategies"))
MACHINERY_FILES = frozenset(
    HARNESS + f
    for f in (
        "__init__.py",
        "api.py",
        "busy_wait.py",
        "core.py",
        "ctrl_c.py",
        "declared.py",
        "design_rows.py",
        "execution.py",
        "hash_seed.py",
        "loops.py",
        "process_saved.py",
        "process_watch.py",
        "options.py",
        "own_code.py",
        "own_lines.py",
        "patch_logging.py",
        "patch_modules.py",
        "patch_reach.py",
        "patch_state.py",
        "pytest_plugin.py",
        "race_applied.py",
        "race_attributes.py",
        "race_builtins.py",
        "race_calls.py",
        "race_files.py",
        "race_stats.py",
        "race_paths.py",
        "race_frames.py",
        "race_functions.py",
        "race_items.py",
        "race_library.py",
        "race_methods.py",
        "race_objects.py",
        "race_python_tracer.py",
        "race_shadow.py",
        "race_report.py",
        "race_sites.py",
        "race_swaps.py",
        "signal_wakeup.py",
        "races.py",
        "reference_fields.py",
        "report.py",
        "repr_guard.py",
        "report_timing.py",
        "runtime.py",
        "schedule.py",
        "searching.py",
        "stateful.py",
        "step_deadline.py",
        "endless_loops.py",
        "swarm.py",
        "verify_rows.py",
    )
)
# logged_steps.py's tracer too: its store before each event runs on the program's behalf, and a
# report names the line that emitted the event
# patch_imported.py's stand-ins hand a program's calls to its lock's twin, as patch.py's wrappers do
WRAPPERS = frozenset(
    HARNESS + name
    for name in (
        "patch.py",
        "patch_asyncio.py",
        "patch_threads.py",
        "patch_types.py",
        "patch_cached.py",
        "patch_clock.py",
        "patch_either.py",
        "patch_imports.py",
        "patch_local.py",
        "patch_imported.py",
        "patch_process.py",
        "patch_random.py",
        "patch_numpy_random.py",
        "patch_io.py",
        "patch_io_pieces.py",
        "patch_io_waits.py",
        "patch_io_outside.py",
        "patch_children.py",
        "patch_io_selectors.py",
        "patch_io_buffered.py",
        "patch_descriptors.py",
        "patch_mock.py",
        "patch_fork.py",
        "patch_mp_sync.py",
        "patch_mp_imported.py",
        "patch_mp_memory.py",
        "patch_files.py",
        "patch_flock.py",
        "patch_renames.py",
        "patch_identity.py",
        "patch_sqlite.py",
        "patch_signals.py",
        "patch_os_thread.py",
        "patch_exit_calls.py",
        "patch_sigwait.py",
        "signal_masks.py",
        "patch_streams.py",
        "patch_shared.py",
        "patch_context.py",
        "patch_tz.py",
        "patch_warnings.py",
        "per_execution.py",
        "thread_idents.py",
        "logged_steps.py",
    )
)
_PROGRAMS = ("examples", "lane_programs", "lane_posts", "drain_watch")
PROGRAM_FILES = frozenset(HARNESS + name + ".py" for name in _PROGRAMS)
PROGRAM_MODULES = frozenset(f"model_checks.harness.{name}" for name in _PROGRAMS)
# the steps the lane designs' scenarios share: code under test, but not the line a report names
SHARED_STEPS = (HARNESS + "lane_programs.py", HARNESS + "lane_posts.py")


def machinery(filename: str) -> bool:
    """Is ``filename`` the harness's machinery (its frames keep no state of a thread)?"""
    return filename in MACHINERY_FILES or filename.startswith(MACHINERY_DIRS)


def own(filename: str) -> bool:
    """Is ``filename`` the harness's own code: its machinery or its wrappers (not a program's)?"""
    return filename in WRAPPERS or machinery(filename)
