"""A Hypothesis strategy drawing scheduling choices, so Hypothesis shrinks failing schedules.

    @given(choices=schedules())
    def test_x(choices):
        result = check(program, choices=choices)
        assert result.ok, result.report()

Each drawn integer picks among the enabled actions of one step, 0 meaning "keep running the
current thread"; Hypothesis shrinks towards short lists of zeros, i.e. towards fewer preemptions.
"""

from __future__ import annotations

from hypothesis import strategies as st


def schedules(max_steps: int = 200, max_choice: int = 7) -> st.SearchStrategy[list[int]]:
    """Lists of choice indices for ``check(..., choices=...)``."""
    return st.lists(st.integers(min_value=0, max_value=max_choice), max_size=max_steps)
