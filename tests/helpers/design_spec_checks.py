"""The spec checks that every design's ``test_spec.py`` runs the same way, written once.

A design's test module subclasses :class:`DesignSpecChecks` as ``TestDesignSpec`` and names its
design and the few choices that differ; pytest collects the checks under that class.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from model_checks.design import Design
from tests.spec_helpers import (
    assert_caught_with_symmetry,
    assert_pc_hints_change_nothing,
    assert_reads_cover,
    assert_symmetry_reduces,
    reachable,
    spec_or_mutant,
)


class DesignSpecChecks:
    design: ClassVar[Design]
    symmetry_mutant: ClassVar[str]  # a mutant that symmetry reduction must still catch in `small`
    pc_hints_config: ClassVar[str]  # where the explorer's pc hints must change nothing
    reads_cover: ClassVar[tuple[str, ...]]  # "design" and mutants whose reads= hints are checked in `small`

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "reads_of" in metafunc.fixturenames:
            metafunc.parametrize("reads_of", self.reads_cover)

    def test_symmetry_reduces_and_says_liveness_is_skipped(self) -> None:
        assert_symmetry_reduces(self.design.spec, self.design.config("small"))

    def test_symmetry_still_catches_a_mutant(self) -> None:
        assert_caught_with_symmetry(self.design.mutants[self.symmetry_mutant], self.design.config("small"))

    def test_invariant_reads_cover_every_reachable_state(self, reads_of: str) -> None:
        d = self.design
        spec, constants = spec_or_mutant(d.spec, d.mutants, reads_of, d.config("small"))
        assert_reads_cover(spec, constants, reachable(spec, constants))

    def test_pc_hints_change_nothing(self) -> None:
        assert_pc_hints_change_nothing(self.design.spec, self.design.config(self.pc_hints_config))
