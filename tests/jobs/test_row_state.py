"""A jobs row's ``state`` column read back: an unknown value is refused by name, not a KeyError."""

from __future__ import annotations

import pytest

from reference.jobs.model import JobState
from reference.jobs.rows import state_of


def test_every_state_reads_back() -> None:
    assert [state_of(s.value) for s in JobState] == list(JobState)


@pytest.mark.parametrize("bad", ["runnning", "", None, 3, ["pending"]])
def test_an_unknown_state_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(ValueError, match="unknown state") as refused:
        state_of(bad)
    assert repr(bad) in str(refused.value)
