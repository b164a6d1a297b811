"""Which harness core runs: the compiled one (mypyc, built at install) or its Python source.

The scheduler, the primitives' model and the strategies (``CORE``) are plain, fully typed Python
that ``pip install`` compiles with mypyc into extension modules beside the sources (about 2x
faster per scheduling step; docs/performance.md). They are used all together or not at all;
``model_checks/compiled_choice.py`` says when the Python sources run instead.

Importing this module decides (``install()``); ``model_checks/harness/__init__.py`` imports it
before anything else, so before any core module.
"""

from __future__ import annotations

from model_checks.compiled_choice import CompiledGroup

CORE = (
    "model_checks.harness.rt.objects",
    "model_checks.harness.rt.records",
    "model_checks.harness.rt.fairness",
    "model_checks.harness.rt.enabled",
    "model_checks.harness.rt.clock",
    "model_checks.harness.rt.repr_lists",
    "model_checks.harness.rt.scheduler",
    "model_checks.harness.runtime",
    "model_checks.harness.drain_watch",
    "model_checks.harness.sync.fifo",
    "model_checks.harness.sync.timeouts",
    "model_checks.harness.sync.primitives",
    "model_checks.harness.sync.handles",
    "model_checks.harness.strategies.randomized",
    "model_checks.harness.strategies.dependency",
    "model_checks.harness.strategies.search_tree",
    "model_checks.harness.strategies.search",
    "model_checks.harness.strategies.simple",
)


class StaleCoreWarning(UserWarning):
    """The compiled core is older than its sources (or unreachable); the sources run."""


_GROUP = CompiledGroup(CORE, "harness core", StaleCoreWarning)


def kind() -> str:
    """ "compiled" or "pure": which core this process runs."""
    return _GROUP.kind


def describe() -> str:
    return _GROUP.describe()


def install() -> None:
    _GROUP.install("about half the speed")


install()
