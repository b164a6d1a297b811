"""``Discards`` records each discard once, in call order, and compares as the list it recorded."""

from __future__ import annotations

from typing import Any

import pytest

from reference import LaneSpec, Result, WorkerScheduler
from tests.helpers.discards import Discards


def test_each_call_is_one_entry_in_call_order() -> None:
    discards = Discards()
    discards(1, "b")
    discards(0, "a")
    assert discards == [(1, "b"), (0, "a")]
    # it must fail where the order, the lane or the count differ
    assert discards != [(0, "a"), (1, "b")]
    assert discards != [(0, "b"), (0, "a")]
    assert discards != [(1, "b")]


def test_the_reference_takes_it_as_on_discard_where_a_plain_list_is_refused() -> None:
    def build(on_discard: object) -> WorkerScheduler[Any]:
        return WorkerScheduler(
            [LaneSpec(lambda context, item: None)],
            workers=1,
            lane_capacity=4,
            max_per_drain=1,
            on_discard=on_discard,  # type: ignore[arg-type]
        )

    with pytest.raises(TypeError, match=r"^on_discard"):
        build([])
    scheduler = build(Discards())
    assert scheduler.stop() is Result.SUCCESS
