"""The scripted probe of every entry point (``tests/fuzz/probe_bad_input/``) as a marked job.

It takes minutes (each of ~750 cases in a child process with its own limits), so it runs outside
the suite: ``pytest -m soak tests/fuzz/test_probe.py``. The short fuzz properties run in CI.
"""

from __future__ import annotations

import pytest

from tests.fuzz import probe_bad_input


@pytest.mark.soak
@pytest.mark.timeout(1800)
def test_no_input_gives_a_traceback_a_hang_a_runaway_or_a_lost_item() -> None:
    assert probe_bad_input.main([]) == 0
