"""Build hook: compile the harness core with mypyc (see model_checks/harness/core.py), the generic
trace search with mypyc (``SEARCH_FILES``: the trace reader, the streaming search and the driver
of the designs it judges; docs/conformance.md, section 6), the spec's function values
(``SPEC_FILES``, run compiled where the trace search is imported first) and the race detector's
C trace function (``model_checks/harness/_race_tracer.c``, with its frame reader and clocks and the
state fingerprint's hot paths: the other ``_*.c`` files beside it; CPython 3.11 only).

Everything else is in pyproject.toml. ``LANECHECK_PURE=1 pip install -e .`` skips compiling; a
failed compilation leaves the pure-Python core (or search, or the race detector's Python tracer),
loudly, and the install goes on.
"""

import os
import sys

from setuptools import Extension, setup  # type: ignore[import-untyped]
from setuptools.command.build_ext import build_ext  # type: ignore[import-untyped]

CORE_FILES = [
    "model_checks/harness/rt/objects.py",
    "model_checks/harness/rt/records.py",
    "model_checks/harness/rt/fairness.py",
    "model_checks/harness/rt/enabled.py",
    "model_checks/harness/rt/clock.py",
    "model_checks/harness/rt/repr_lists.py",
    "model_checks/harness/rt/scheduler.py",
    "model_checks/harness/runtime.py",
    "model_checks/harness/drain_watch.py",
    "model_checks/harness/sync/fifo.py",
    "model_checks/harness/sync/timeouts.py",
    "model_checks/harness/sync/primitives.py",
    "model_checks/harness/sync/handles.py",
    "model_checks/harness/strategies/randomized.py",
    "model_checks/harness/strategies/dependency.py",
    "model_checks/harness/strategies/search_tree.py",
    "model_checks/harness/strategies/search.py",
    "model_checks/harness/strategies/simple.py",
]

# A group of its own (its own shared library): a failure to compile one group leaves the other
# compiled, and neither group's modules call into the other's.
# ``conformance/__init__.py`` (never compiled) decides, before any of them is imported, whether
# they run compiled.
SEARCH_FILES = [
    "model_checks/conformance/reader.py",
    "model_checks/conformance/search.py",
    "model_checks/conformance/step_index.py",
    "model_checks/conformance/streamed.py",
    "model_checks/conformance/action_tables.py",
    "model_checks/conformance/deferral.py",
    "model_checks/conformance/near_miss.py",
    "model_checks/conformance/event_plan.py",
]

# The spec's function values (the states' components: every step builds some), a group of its own.
# It is *hidden*: its loaders are named ``function.mypyc.<suffix>``, which no plain import looks
# for, so the spec (which imports nothing of ours, so nothing of ours decides before it) always
# loads its source unless ``conformance/__init__.py`` decided "compiled" first
# (``model_checks/compiled_choice.py``, ``HIDDEN``).
SPEC_FILES = ["spec/function.py"]
HIDDEN = ".mypyc"
HIDDEN_MODULES = frozenset(f.removesuffix(".py").replace("/", ".") for f in SPEC_FILES)


def _extensions() -> list[Extension]:
    if os.environ.get("LANECHECK_PURE") == "1":
        return []
    return [
        *_compiled("the harness core", CORE_FILES),
        *_compiled("the trace search", SEARCH_FILES),
        *_compiled("the spec's functions", SPEC_FILES),
    ]


def _compiled(what: str, files: list[str]) -> list[Extension]:
    try:
        from mypyc.build import mypycify

        # The build environment has none of the test-time packages (hypothesis, pytest) that
        # non-compiled modules of the package import; their types do not reach the compiled code.
        # Without those packages some ``type: ignore`` of the modules imported goes unused.
        flags = ["--ignore-missing-imports", "--no-warn-unused-ignores"]
        return mypycify([*flags, *files], opt_level="3")
    except (Exception, SystemExit) as exc:  # a missing compiler or a type error: pure Python
        print(f"lanecheck: not compiling {what} ({exc!r}); it runs as Python", file=sys.stderr)
        return []


# (the fingerprint's hot paths share its module: one C extension, one policy in ``rt/native.py``)
RACE_TRACER = Extension(
    "model_checks.harness._race_tracer",
    [
        "model_checks/harness/_race_tracer.c",
        "model_checks/harness/_race_filter.c",
        "model_checks/harness/_frame_reader.c",
        "model_checks/harness/_race_clocks.c",
        "model_checks/harness/_fingerprint_hot.c",
        "model_checks/harness/_fingerprint_same.c",
        "model_checks/harness/_field_reader.c",
        "model_checks/harness/_process_watch.c",
        "model_checks/harness/_process_hooks.c",
    ],
    depends=["model_checks/harness/_native.h", "model_checks/harness/_race_tracer.h"],
)


def _race_tracer() -> list[Extension]:
    # it reads CPython 3.11's frame layout (its internal headers, shipped with the Python headers)
    if os.environ.get("LANECHECK_PURE") == "1" or sys.version_info[:2] != (3, 11):
        return []
    return [RACE_TRACER]


def _hidden(path: str) -> str:
    """``.../function.<suffix>`` -> ``.../function.mypyc.<suffix>``."""
    folder, file = os.path.split(path)
    module, dot, suffix = file.partition(".")
    return os.path.join(folder, module + HIDDEN + dot + suffix)


class _BuildExt(build_ext):  # type: ignore[misc]
    """A failed build leaves Python in its place, loudly: the sources of a mypyc group (whose
    loaders then find no shared library: ``model_checks/compiled_choice.py``), or the race
    detector's Python tracer (``race_frames.NATIVE``)."""

    def initialize_options(self) -> None:
        super().initialize_options()
        # The compiled groups and the C tracer are separate extensions, each a long compile: build
        # them on every core (about a quarter off a 2-core install; ``-j N`` still decides).
        self.parallel = True

    # Where an extension is built (``get_ext_fullpath``) and where ``--inplace`` copies it from
    # (``get_ext_filename`` of the full name): a hidden module's loader, in both.
    def get_ext_fullpath(self, ext_name: str) -> str:
        path: str = super().get_ext_fullpath(ext_name)
        return _hidden(path) if self.get_ext_fullname(ext_name) in HIDDEN_MODULES else path

    def get_ext_filename(self, fullname: str) -> str:
        name: str = super().get_ext_filename(fullname)
        return _hidden(name) if fullname in HIDDEN_MODULES else name

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # no compiler or headers
            print(f"lanecheck: not building {ext.name} ({exc!r}); it runs as Python", file=sys.stderr)


setup(ext_modules=[*_extensions(), *_race_tracer()], cmdclass={"build_ext": _BuildExt})
