"""The built-in designs, one folder each: everything lanecheck knows about a design.

A folder's ``__init__`` builds one ``model_checks.design.Design`` named
``DESIGN``; the registry (``model_checks.registry``) loads the folders it lists
in ``BUILT_IN``, then third-party designs declared under the ``lanecheck.designs`` entry
point group. Designs never import each other, and the generic packages never
import a design (import-linter contracts in pyproject.toml). The little the folders share that
reads a design's own spec (``internal_at``) is here, in the package they all belong to: a sibling
module would be a design that the others import.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spec.language import Spec


def internal_at(spec: Spec) -> dict[str, frozenset[Hashable]]:
    """The program counters at which each internal action (``event=None``) of ``spec`` can be
    enabled, as its ``at=`` declares them (its first guard), for a trace search's ``enabled_at``.
    Taken from the spec, not restated beside it: the explorer already trusts ``at=`` to skip the
    action elsewhere. An internal action without ``at=`` is left out (tried at every pc)."""
    return {a.name: a.at for a in spec.actions if a.event is None and a.at is not None}
