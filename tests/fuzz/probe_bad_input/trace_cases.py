"""The probe's trace cases: ``lanecheck validate`` on malformed, hostile and huge trace files, with
both engines and both outputs, ends with a verdict or a named error; never a traceback or a hang."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fuzz.probe_bad_input.cli_cases import cli
from tests.fuzz.probe_bad_input.sandbox import Case, Outcome


def trace_cases(root: Path) -> list[Case]:
    cases: list[Case] = []
    corpus = Path(__file__).parents[2] / "conformance" / "corpus"
    good = (corpus / "valid_basic_drain.jsonl").read_bytes()
    lines = good.splitlines()
    header = json.loads(lines[0])

    def head(**config: object) -> bytes:
        h = json.loads(lines[0])
        h["config"].update(config)
        return json.dumps(h).encode()

    def gate_head(**config: object) -> bytes:
        c = {"actors": 2, "workers": 1, "permits": 1, "mailbox_capacity": 2, "max_per_drain": 1, **config}
        return json.dumps(
            {"trace": "lanecheck", "version": 1, "design": "schedule-gate", "config": c}
        ).encode()

    def akka_head(**config: object) -> bytes:
        c = {"mailboxes": 1, "workers": 1, "throughput": 1, **config}
        return json.dumps(
            {"trace": "lanecheck", "version": 1, "design": "akka-mailbox", "config": c}
        ).encode()

    post = lines[1]
    traces: dict[str, bytes] = {
        "empty file": b"",
        "only newline": b"\n",
        "binary garbage": bytes(range(256)) * 4,
        "BOM + good trace": b"\xef\xbb\xbf" + good,
        "NUL in line": lines[0] + b"\n" + post.replace(b'"a"', b'"a\x00"'),
        "raw NUL byte": lines[0] + b"\n\x00\n",
        "bare CR in a line (whitespace)": lines[0] + b"\n" + post.replace(b", ", b",\r ", 1),
        "CRLF trace": good.replace(b"\n", b"\r\n"),
        "U+2028 in an item": lines[0] + b"\n" + post.replace(b'"a"', '"a\u2028b"'.encode()),
        "lone surrogate item": lines[0] + b"\n" + post.replace(b'"a"', b'"\\ud800"'),
        "invalid UTF-8 item": lines[0] + b"\n" + post.replace(b'"a"', b'"\xff\xfe"'),
        "deep nesting 100000": lines[0] + b"\n" + b"[" * 100_000 + b"]" * 100_000,
        "deep nesting in header": b'{"trace":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        "duplicate key in header": lines[0].replace(b'"version": 1', b'"version": 1, "version": 1'),
        "duplicate key in event": lines[0] + b"\n" + post.replace(b'"lane": 0', b'"lane": 0, "lane": 1'),
        "version 1.0": lines[0].replace(b'"version": 1', b'"version": 1.0'),
        "version true": lines[0].replace(b'"version": 1', b'"version": true'),
        "lanes 2.0": head(lanes=2.0),
        "lanes true": head(lanes=True),
        "lanes 1e9": head(lanes=1_000_000_000) + b"\n" + post,
        "lanes 2**70": head(lanes=2**70) + b"\n" + post,
        "lanes -1": head(lanes=-1),
        "lanes 0": head(lanes=0),
        "workers 10**9": head(workers=10**9) + b"\n" + post,
        "lane_capacity 10**30": head(lane_capacity=10**30),
        "NaN capacity": lines[0].replace(b'"lane_capacity": 2', b'"lane_capacity": NaN'),
        "Infinity budget": lines[0].replace(b'"max_per_drain": 2', b'"max_per_drain": Infinity'),
        "huge number literal": lines[0].replace(b'"lanes": 2', b'"lanes": ' + b"9" * 5000),
        "huge float exponent": lines[0].replace(b'"lanes": 2', b'"lanes": 1e999999'),
        "truncated last line": good[: len(good) - 7],
        "truncated header": lines[0][:30],
        "header only": lines[0] + b"\n",
        "missing header": b"\n".join(lines[1:]),
        "header is a list": b"[1,2,3]\n" + post,
        "header is a string": b'"lanecheck"\n' + post,
        "design bogus": lines[0].replace(b'"work-lane"', b'"bogus"'),
        "design null": lines[0].replace(b'"work-lane"', b"null"),
        "design list": lines[0].replace(b'"work-lane"', b"[1]"),
        "design work-stealing": lines[0].replace(b'"work-lane"', b'"work-stealing"') + b"\n" + post,
        "design event-pool": lines[0].replace(b'"work-lane"', b'"event-pool"') + b"\n" + post,
        "gate actors 1e9": gate_head(actors=10**9)
        + b"\n"
        + b'{"seq": 1, "thread": "p0", "event": "post", "actor": 0, "item": "a", "result": "ok"}',
        "gate actors 2.0": gate_head(actors=2.0),
        "gate permits -1": gate_head(permits=-1),
        "gate header only": gate_head() + b"\n",
        "akka throughput -5": akka_head(throughput=-5),
        "akka throughput 0": akka_head(throughput=0),
        "akka mailboxes 2**40": akka_head(mailboxes=2**40)
        + b"\n"
        + b'{"seq": 1, "thread": "p0", "event": "send", "mailbox": 0, "item": "a"}',
        "akka header only": akka_head() + b"\n",
        "event not an object": lines[0] + b"\n[1,2]",
        "seq huge": lines[0] + b"\n" + post.replace(b'"seq": 1', b'"seq": ' + str(2**70).encode()),
        "lane huge": lines[0] + b"\n" + post.replace(b'"lane": 0', b'"lane": ' + str(2**70).encode()),
        "thread 10k chars": lines[0] + b"\n" + post.replace(b'"p0"', b'"' + b"p" * 10_000 + b'"'),
        "100k events of one lane": lines[0]
        + b"\n"
        + b"\n".join(
            post.replace(b'"seq": 1', b'"seq": %d' % (k + 1)).replace(b'"a"', b'"i%d"' % k)
            for k in range(100_000)
        ),
        "rich markup in item": lines[0] + b"\n" + post.replace(b'"a"', b'"[red]x[/red][link=file:///etc]"'),
    }
    big = lines[0] + b"\n" + post.replace(b'"a"', b'"' + b"x" * (50 * 1024 * 1024) + b'"')
    for label, body in traces.items():
        path = root / f"trace-{len(cases)}.jsonl"
        path.write_bytes(body)
        for engine in ("fast", "spec"):
            if engine == "spec" and label not in (
                "deep nesting 100000",
                "lanes 1e9",
                "duplicate key in event",
                "lone surrogate item",
                "bare CR in a line (whitespace)",
                "lanes 2.0",
            ):
                continue
            codes = {0, 1, 2}  # every verdict is an answer; the point is how it ends
            for out in ("text", "json"):
                args = ["validate", str(path), "--engine", engine] + (["--json"] if out == "json" else [])

                def must(label: str = label) -> Callable[[Any], Outcome | None]:
                    def check(result: Any) -> Outcome | None:
                        expect_ok = label in (
                            "BOM + good trace",
                            "CRLF trace",
                            "bare CR in a line (whitespace)",
                        )
                        expect_bad = label in (
                            "duplicate key in header",
                            "duplicate key in event",
                            "version 1.0",
                            "version true",
                            "lanes 2.0",
                            "lanes true",
                            "NaN capacity",
                            "Infinity budget",
                            "gate actors 2.0",
                            "gate permits -1",
                            "akka throughput -5",
                            "akka throughput 0",
                            "design bogus",
                            "design work-stealing",
                            "design event-pool",
                            "lanes -1",
                            "lanes 0",
                            "empty file",
                            "binary garbage",
                        )
                        if expect_ok and result.exit_code != 0 and label != "BOM + good trace":
                            return (
                                "SILENTLY WRONG",
                                f"a valid trace got exit {result.exit_code}: {result.output.strip()[:120]!r}",
                            )
                        if expect_bad and result.exit_code == 0:
                            return "SILENTLY WRONG", f"accepted: {result.output.strip()[:120]!r}"
                        if (
                            result.exit_code == 2
                            and "design" in label
                            and "work-" in label
                            and "format" not in result.output.lower()
                            and "no trace" not in result.output.lower()
                            and "unknown" not in result.output.lower()
                        ):
                            return None
                        return None

                    return check

                cases.append((f"trace {label} [{engine},{out}]", cli(args, codes, check=must())))
    path = root / "trace-big.jsonl"
    path.write_bytes(big)
    cases.append(("trace 50 MB item [fast,text]", cli(["validate", str(path)], {0, 1, 2})))
    cases.append(("trace 50 MB item [fast,json]", cli(["validate", str(path), "--json"], {0, 1, 2})))
    cases.append(("trace - (stdin) good", cli(["validate", "-"], {0}, stdin=good)))
    cases.append(("trace - (stdin) garbage", cli(["validate", "-"], {2}, stdin=b"\xff\x00garbage")))
    cases.append(("trace missing file", cli(["validate", str(root / "nope.jsonl")])))
    cases.append(("trace a directory", cli(["validate", str(root)])))
    cases.append(
        (
            "trace unreadable file",
            cli(["validate", "/root/.bash_history" if os.geteuid() != 0 else "/proc/self/mem"], {1, 2}),
        )
    )
    cases.append(
        (
            "trace engine bogus",
            cli(["validate", str(corpus / "valid_basic_drain.jsonl"), "--engine", "bogus"]),
        )
    )
    cases.append(
        (
            "trace --complete on work-lane",
            cli(["validate", str(corpus / "valid_basic_drain.jsonl"), "--complete"], {0, 2}),
        )
    )
    del header
    return cases
