"""Same-trace conformance: does some behaviour of the spec produce this trace?

``validate_file(path)`` / ``validate_stream(binary)`` / ``validate_lines(lines)`` return a ``Verdict``;
``lanecheck validate TRACE`` is the command (docs/trace-format.md, docs/ports.md).

This package's ``__init__`` runs before any of its modules, so it is where the generic trace
search's compiled group (``SEARCH``, setup.py's ``SEARCH_FILES``) is decided, as
``harness/core.py`` does for the harness core (``model_checks/compiled_choice.py``): a module
compiled with mypyc runs its body before the import system files it, too late to hand over to its
source, so the module that decides is one that is never compiled (this one).
"""

from collections.abc import Sequence

from model_checks.compiled_choice import ROOT, CompiledGroup, decide

SEARCH = (
    "model_checks.conformance.reader",
    "model_checks.conformance.search",
    "model_checks.conformance.step_index",
    "model_checks.conformance.streamed",
    "model_checks.conformance.action_tables",
    "model_checks.conformance.deferral",
    "model_checks.conformance.near_miss",
    "model_checks.conformance.event_plan",
)


class StaleSearchWarning(UserWarning):
    """The compiled trace search is older than its sources (or unreachable); the sources run."""


def search_decision(names: Sequence[str] = SEARCH, root: str = ROOT) -> tuple[str, str]:
    """("compiled" | "pure", why) for the modules ``names`` of the checkout at ``root``."""
    return decide(names, "trace search", root)


_GROUP = CompiledGroup(SEARCH, "trace search", StaleSearchWarning)


def search_kind() -> str:
    """ "compiled" or "pure": the trace search this process runs (reader, search, streamed, ...)."""
    return _GROUP.kind


def describe_search() -> str:
    return _GROUP.describe()


_GROUP.install("slower")

# The spec's function values, compiled (setup.py's ``SPEC_FILES``) for the search, which builds one
# or more in every step it tries. A hidden group: imported before this decision (the spec alone,
# the explorer), ``spec.function`` is its source.
SPEC_VALUES = ("spec.function",)
_SPEC_GROUP = CompiledGroup(SPEC_VALUES, "spec functions", StaleSearchWarning, hidden=True)
_SPEC_GROUP.install("slower")


def spec_values_kind() -> str:
    """ "compiled" or "pure": which ``spec.function`` this process runs."""
    return _SPEC_GROUP.kind


def describe_spec_values() -> str:
    return _SPEC_GROUP.describe()


# After the decision: these import the group's modules.
from model_checks.conformance.designs import ENGINES  # noqa: E402
from model_checks.conformance.validator import validate_file, validate_lines, validate_stream  # noqa: E402
from model_checks.conformance.verdict import Verdict  # noqa: E402

__all__ = [
    "ENGINES",
    "SEARCH",
    "SPEC_VALUES",
    "StaleSearchWarning",
    "Verdict",
    "describe_search",
    "describe_spec_values",
    "search_decision",
    "search_kind",
    "spec_values_kind",
    "validate_file",
    "validate_lines",
    "validate_stream",
]
