"""The golden corpus's malformed files (``malformed_NAME.jsonl``, written by ``make_corpus``): each
not a well-formed trace at a known line, given verbatim."""

from __future__ import annotations

import json

from tests.conformance.corpus_steps import header

HEADER = header()
E1 = json.dumps(
    {"seq": 1, "thread": "p0", "event": "post", "lane": 0, "item": "a", "result": "ok", "submit": True}
)
E2 = json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": 0})

# name -> (lines, line)
MALFORMED: dict[str, tuple[list[str], int]] = {
    "wf_bad_json": ([HEADER, E1, '{"seq": 2, "thread": "p0", "event": '], 3),
    "wf_missing_header": ([E1, E2], 1),
    "wf_wrong_version": ([HEADER.replace('"version": 1', '"version": 2'), E1], 1),
    "wf_config_missing_field": ([HEADER.replace('"workers": 2, ', ""), E1], 1),
    "wf_unknown_event": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "enqueue", "lane": 0})],
        3,
    ),
    "wf_missing_field": (
        [
            HEADER,
            json.dumps({"seq": 1, "thread": "p0", "event": "post", "lane": 0, "item": "a", "result": "ok"}),
        ],
        2,
    ),
    "wf_ill_typed_lane": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": "0"})],
        3,
    ),
    "wf_bool_lane": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": True})],
        3,
    ),
    "wf_lane_out_of_range": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": 5})],
        3,
    ),
    "wf_seq_gap": ([HEADER, E1, E2.replace('"seq": 2', '"seq": 3')], 3),
    "wf_blank_line": ([HEADER, E1, "", E2], 3),
    "wf_submit_on_refused_post": (
        [
            HEADER,
            json.dumps(
                {
                    "seq": 1,
                    "thread": "p0",
                    "event": "post",
                    "lane": 0,
                    "item": "a",
                    "result": "capacity_exceeded",
                    "submit": True,
                }
            ),
        ],
        2,
    ),
    "wf_thread_not_string": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": 3, "event": "submit", "lane": 0})],
        3,
    ),
}
