"""The lane scenarios' producers (``harness.lane_posts``): each posts its items round-robin over the
lanes, in order, and records every result where it came from."""

from __future__ import annotations

from model_checks.harness.lane_posts import Item, Posts, round_robin_producers


def test_producer_p_posts_item_i_to_lane_p_plus_i_and_records_each_result() -> None:
    posted: list[tuple[int, Item]] = []
    recorded: list[tuple[int, Item, int, str]] = []

    def post(lane: int, item: Item) -> str:
        posted.append((lane, item))
        return "full" if lane == 2 else "ok"

    producer = round_robin_producers(post, 3, 3, lambda p, item, lane, r: recorded.append((p, item, lane, r)))
    producer(1)()
    assert posted == [(1, (1, 0)), (2, (1, 1)), (0, (1, 2))]
    assert recorded == [(1, (1, 0), 1, "ok"), (1, (1, 1), 2, "full"), (1, (1, 2), 0, "ok")]


def test_a_producer_with_no_items_posts_nothing() -> None:
    posted: list[Item] = []
    round_robin_producers(lambda lane, item: posted.append(item), 0, 2, lambda *_: None)(0)()
    assert posted == []


def test_posts_keep_the_accepted_and_the_refused_per_producer() -> None:
    posts = Posts(2, "ok")
    producer = round_robin_producers(
        lambda lane, item: "ok" if item != (1, 1) else "full", 2, 2, posts.record
    )
    producer(0)()
    producer(1)()
    assert posts.accepted == [[((0, 0), 0), ((0, 1), 1)], [((1, 0), 1)]]
    assert posts.refused == [[], [((1, 1), 0, "full")]]
    assert posts.all_accepted() == [((0, 0), 0), ((0, 1), 1), ((1, 0), 1)]
