"""The golden corpus's refused traces (``invalid_NAME.jsonl``, written by ``make_corpus``): each
breaks one rule of docs/trace-format.md, first at a known step; the name starts with its rule."""

from __future__ import annotations

from tests.conformance.corpus_steps import (
    Step,
    begin,
    disc,
    end,
    inv,
    ln,
    one_item,
    post,
    rej,
    retried_and_resubmitted,
    sb,
    se,
    stopped,
    submitted,
)

# name -> (steps, seq, rule)
INVALID: dict[str, tuple[list[Step], int, int]] = {
    "r1_take_out_of_order": (
        [
            *submitted("p0", 0, "a"),
            *submitted("p1", 1, "b"),
            ln("w0", "take", 1),
        ],
        5,
        1,
    ),
    "r1_take_from_empty_ready_queue": ([post("p0", 0, "a", submit=True), ln("w0", "take", 0)], 2, 1),
    "r2_second_reservation": ([post("p0", 0, "a", submit=True), post("p1", 0, "b", submit=True)], 2, 2),
    "r2_owed_submit_skipped": ([post("p0", 0, "a", submit=True), post("p0", 1, "b", submit=True)], 2, 2),
    "r2_submit_not_owed": (
        [*submitted("p0", 0, "a"), ln("p1", "submit", 0)],
        3,
        2,
    ),
    "r2_worker_resubmit_owed": (
        [*retried_and_resubmitted(), ln("w0", "take", 0)],
        11,
        2,
    ),
    "r3_invoke_without_drain": (
        [*submitted("p0", 0, "a"), inv("w0", 0, "a")],
        3,
        3,
    ),
    "r3_invoke_by_other_thread": ([*one_item()[:4], inv("w1", 0, "a")], 5, 3),
    "r3_over_budget": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            inv("w0", 0, "b"),
            post("p0", 0, "c"),
            inv("w0", 0, "c"),
        ],
        9,
        3,
    ),
    "r3_invoked_count_wrong": ([*one_item()[:5], end("w0", 0, "idle", 2)], 6, 3),
    "r3_drain_begin_without_take": (
        [*submitted("p0", 0, "a"), ln("w0", "drain_begin", 0)],
        3,
        3,
    ),
    "r3_resubmit_before_budget": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            end("w0", 0, "resubmit", 1),
        ],
        7,
        3,
    ),
    "r4_invoke_out_of_order": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "b"),
        ],
        6,
        4,
    ),
    "r4_invoke_never_posted": ([*one_item()[:4], inv("w0", 0, "zz")], 5, 4),
    "r4_invoke_twice": ([*one_item()[:5], inv("w0", 0, "a")], 6, 4),
    # an item id accepted again while in flight (session 37's review: both accepted and both run)
    "r4_item_accepted_twice": (
        [*submitted("p0", 0, "a"), post("p0", 0, "a"), *begin("w0", 0), inv("w0", 0, "a"), inv("w0", 0, "a")],
        3,
        4,
    ),
    "r4_item_in_flight_posted_to_another_lane": ([*submitted("p0", 0, "a"), *submitted("p1", 1, "a")], 3, 4),
    "r4_invoke_refused_item": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            post("p0", 0, "c", "capacity_exceeded"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            inv("w0", 0, "c"),
        ],
        8,
        4,
    ),
    "r5_lost_wakeup": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            end("w0", 0, "idle", 1),
        ],
        7,
        5,
    ),
    "r5_resubmit_empty_lane": ([*one_item()[:5], end("w0", 0, "resubmit", 1)], 6, 5),
    "r5_post_to_idle_lane_without_reservation": ([post("p0", 0, "a")], 1, 5),
    "r6_ok_on_full_lane": (
        [*submitted("p0", 0, "a"), post("p0", 0, "b"), post("p0", 0, "c")],
        4,
        6,
    ),
    "r6_capacity_exceeded_with_room": ([post("p0", 0, "a", "capacity_exceeded")], 1, 6),
    "r7_post_ok_after_stop_begin": ([sb("main", "drain"), post("p0", 0, "a", submit=True)], 2, 7),
    "r7_stop_end_with_item_pending": (
        [*submitted("p0", 0, "a"), *stopped("drain")],
        4,
        7,
    ),
    "r7_drain_begin_after_discard": (
        [
            *submitted("p0", 0, "a"),
            ln("w0", "take", 0),
            sb("main", "discard"),
            ln("w0", "drain_begin", 0),
        ],
        5,
        7,
    ),
    "r7_discard_wrong_items": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            sb("main", "discard"),
            disc("main", 0, ["b", "b"]),
        ],
        5,
        7,
    ),
    "r7_discard_leaves_an_item": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            sb("main", "discard"),
            disc("main", 0, ["b"]),
            se("main", "discard"),
        ],
        6,
        7,
    ),
    "r7_stop_begin_with_post_in_flight": ([post("p0", 0, "a", submit=True), sb("main", "drain")], 2, 7),
    "r7_discard_in_drain_mode": (
        [*submitted("p0", 0, "a"), sb("main", "drain"), disc("main", 0, ["a"])],
        4,
        7,
    ),
    "r7_callback_stop_outside_callback": ([*one_item()[:4], rej("w0", "drain", "in_callback")], 5, 7),
    # a Stop begun inside a callback (session 37's review: accepted, a complete behaviour, before)
    "r7_stop_begun_in_a_callback": (
        [*one_item()[:5], sb("w0", "drain"), end("w0", 0, "idle", 1), se("w0", "drain")],
        6,
        7,
    ),
    "r7_discard_stop_begun_in_a_callback": (
        [*one_item()[:5], sb("w0", "discard"), end("w0", 0, "idle", 1), se("w0", "discard")],
        6,
        7,
    ),
    "r7_second_stop_begin": ([*stopped("drain"), sb("s1", "drain")], 3, 7),
    "r7_take_after_stop_end": (
        [
            *submitted("p0", 0, "a"),
            sb("main", "discard"),
            disc("main", 0, ["a"]),
            se("main", "discard"),
            ln("w0", "take", 0),
        ],
        6,
        7,
    ),
    "r7_post_after_stop_rejected_not_in_flight": (
        [
            *submitted("p0", 0, "a"),
            rej("s1", "drain", "stop_in_progress"),
            post("p0", 1, "b", submit=True),
            post("p0", 1, "c"),
        ],
        5,
        2,
    ),
}
