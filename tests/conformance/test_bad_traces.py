"""Bad input at the trace reader: every malformed trace is exit 2 naming the line, never a crash or a runaway.

Regression tests for issue 14 (the trace part), each through ``validate_file`` and through the CLI.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from model_checks.commands import validate
from model_checks.conformance import reader, validate_file, validate_lines, validate_stream
from model_checks.conformance.reader import MAX_DEPTH, MAX_INDEXED, nesting_depth

CONFIG = {"lanes": 2, "workers": 2, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2}
GATE_CONFIG = {"actors": 2, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 2}
AKKA_CONFIG = {"workers": 1, "throughput": 1}


def header(design: str = "work-lane", version: Any = 1, **config: Any) -> str:
    base = {"work-lane": CONFIG, "schedule-gate": GATE_CONFIG, "akka-mailbox": AKKA_CONFIG}[design]
    return json.dumps(
        {"trace": "lanecheck", "version": version, "design": design, "config": {**base, **config}}
    )


def post(seq: int, lane: int = 0, item: Any = "a", submit: bool = True) -> str:
    return json.dumps(
        {
            "seq": seq,
            "thread": "p0",
            "event": "post",
            "lane": lane,
            "item": item,
            "result": "ok",
            "submit": submit,
        }
    )


def submit(seq: int, lane: int = 0) -> str:
    return json.dumps({"seq": seq, "thread": "p0", "event": "submit", "lane": lane})


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """A group, so that ``validate`` is a subcommand as in ``lanecheck``."""

    validate.register(app)
    return app


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "t.jsonl"
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    path.write_bytes(text)
    return path


def both(tmp_path: Path, text: str | bytes, *args: str) -> tuple[int, str, int, str]:
    """(code, message) from ``validate_file`` and (exit code, output) from the CLI, on the same file."""
    path = write(tmp_path, text)
    verdict = validate_file(path)
    result = CliRunner().invoke(_app(), ["validate", *args, str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return verdict.code, verdict.message, result.exit_code, result.output


def assert_malformed(tmp_path: Path, text: str | bytes, line: int, *words: str) -> None:
    code, message, exit_code, output = both(tmp_path, text)
    assert code == 2 and exit_code == 2, (message, output)
    assert message.startswith(f"line {line}: "), message
    assert f"line {line}" in output and "MALFORMED" in output, output
    for word in words:
        assert word in message, message


# ------------------------------------------------------------------------------ strict JSON


def test_deep_nesting_is_malformed_not_a_recursion_error(tmp_path: Path) -> None:
    assert_malformed(tmp_path, header() + "\n" + "[" * 100_000 + "\n", 2, "nested", "limit is 32")
    assert_malformed(tmp_path, "[" * 100_000 + "]" * 100_000 + "\n", 1, "nested 100000 deep")
    deep_field = json.loads(post(1))
    deep_field["extra"] = json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert_malformed(tmp_path, header() + "\n" + json.dumps(deep_field) + "\n", 2, "nested")


def test_nesting_within_the_limit_is_read() -> None:
    extra = json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))
    line = json.dumps({**json.loads(post(1)), "extra": extra})
    assert validate_lines([header(), line]).code == 0
    # brackets inside strings do not count
    assert validate_lines([header(), post(1, item="[" * 1000)]).code == 0


def test_nesting_depth_measures_without_recursing() -> None:
    assert nesting_depth('{"a": [1, {"b": []}]}') == 4
    assert nesting_depth('"[[[" ') == 0
    assert nesting_depth('["\\"[[", []]') == 2
    assert nesting_depth("[" * 200_000) == 200_000


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    line = post(1).replace('{"seq": 1,', '{"seq": 1, "seq": 1,')
    assert_malformed(tmp_path, header() + "\n" + line + "\n", 2, 'duplicate key "seq"')
    dup_config = header().replace('"lanes": 2,', '"lanes": 2, "lanes": 1,')
    assert_malformed(tmp_path, dup_config + "\n", 1, 'duplicate key "lanes"')
    gate = header("schedule-gate").replace('"trace"', '"design": "work-lane", "trace"')
    assert_malformed(tmp_path, gate + "\n", 1, 'duplicate key "design"')


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(tmp_path: Path, constant: str) -> None:
    line = json.dumps({"seq": 1, "thread": "w", "event": "drain_end", "lane": 0, "outcome": "idle"})
    line = line[:-1] + f', "invoked": {constant}}}'
    assert_malformed(tmp_path, header() + "\n" + line + "\n", 2, constant, "not a JSON number")


def test_a_huge_integer_is_malformed(tmp_path: Path) -> None:
    line = post(1).replace('"seq": 1', '"seq": ' + "9" * 5000)
    assert_malformed(tmp_path, header() + "\n" + line + "\n", 2, "bad JSON")


# ------------------------------------------------------------------------------ the header's types and sizes


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (header(lanes=2.0), "config.lanes must be an integer, not 2.0"),
        (header(workers=True), "config.workers must be an integer, not true"),
        (header(lane_capacity="2"), "config.lane_capacity must be an integer"),
        (header(version=1.0), "version must be the integer 1, not 1.0"),
        (header(version=True), "version must be the integer 1"),
        (header(lanes=1_000_000_000), "config.lanes = 1000000000 is above the limit of 65,536"),
        (header(lanes=2**70), "config.lanes = 1180591620717411303424 is above the limit"),
        (header(lanes=10**100), "config.lanes = a 101-digit number is above the limit"),
        (header(max_per_drain=2**31), "config.max_per_drain = 2147483648 is above the limit"),
        (header("schedule-gate", actors=2.0), "config.actors must be an integer, not 2.0"),
        (header("schedule-gate", actors=1e9), "config.actors must be an integer"),
        (header("schedule-gate", actors=10**9), "config.actors = 1000000000 is above the limit"),
        (header("schedule-gate", version=1.0), "version must be the integer 1"),
        (header("akka-mailbox", throughput=-5), "throughput"),
        (header("akka-mailbox", throughput=0), "throughput"),
        (header("akka-mailbox", throughput=2.5), "config.throughput must be an integer"),
        (header("akka-mailbox", mailboxes=10**6), "config.mailboxes = 1000000 is above the limit"),
        (header("akka-mailbox", workers=10**6), "config.workers = 1000000 is above the limit"),
    ],
)
def test_header_sizes_are_integers_within_the_limits(tmp_path: Path, text: str, words: str) -> None:
    assert_malformed(tmp_path, text + "\n", 1, words)


def test_limits_are_in_the_help() -> None:
    result = CliRunner().invoke(_app(), ["validate", "--help"])
    assert result.exit_code == 0
    flat = " ".join(result.output.split())
    assert "65,536" in flat and "nests at most 32" in flat and "stdin" in flat, result.output


def _peak_bytes(lines: list[str], engine: str = "fast") -> tuple[int, int]:
    validate_lines([header(), post(1), submit(2)], engine=engine)  # schemas compiled, modules loaded
    tracemalloc.start()
    try:
        code = validate_lines(lines, engine=engine).code
        return code, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("engine", ["fast", "spec"])
def test_declared_lanes_cost_nothing_until_used(engine: str) -> None:
    """A 3-line trace whose header declares the most lanes allocates as for the lanes it names."""
    lines = [header(lanes=MAX_INDEXED), post(1), submit(2)]
    code, peak = _peak_bytes(lines, engine)
    assert code == 0 and peak < 2_000_000, peak
    code, peak = _peak_bytes([header(lanes=MAX_INDEXED), post(1, lane=5), submit(2, lane=5)], engine)
    assert code == 0 and peak < 2_000_000, peak


def test_declared_actors_cost_nothing_until_used() -> None:
    gate = [
        header("schedule-gate", actors=MAX_INDEXED),
        json.dumps(
            {"seq": 1, "thread": "p0", "event": "permit_acquire", "actor": 1, "item": "a", "granted": True}
        ),
    ]
    code, peak = _peak_bytes(gate)
    assert code == 0 and peak < 2_000_000, peak


def test_an_akka_mailbox_index_is_bounded_without_the_header_count(tmp_path: Path) -> None:
    line = json.dumps(
        {"seq": 1, "thread": "p0", "event": "send", "mailbox": 10**9, "item": "a", "result": "ok"}
    )
    assert_malformed(tmp_path, header("akka-mailbox") + "\n" + line + "\n", 2, "mailbox")


@pytest.mark.timeout(60)
def test_huge_declared_sizes_run_in_bounded_address_space(tmp_path: Path) -> None:
    """In a process limited to 1 GiB of address space: refused or judged, never out of memory."""
    cases = {
        "billion": [header(lanes=1_000_000_000), post(1), submit(2)],
        "most": [header(lanes=MAX_INDEXED), post(1, lane=MAX_INDEXED - 1), submit(2, lane=MAX_INDEXED - 1)],
        "gate": [header("schedule-gate", actors=10**9)],
    }
    paths = []
    for name, lines in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(str(path))
    script = (
        "import sys\nfrom model_checks.conformance import validate_file\n"
        "print(' '.join(str(validate_file(p).code) for p in sys.argv[1:]))\n"
        "print(' '.join(str(validate_file(p, engine='spec').code) for p in sys.argv[1:2]))\n"
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, *paths],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=50,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", "0", "2", "2"], done.stdout


# ------------------------------------------------------------------------------ lines


def test_a_bare_cr_inside_a_line_is_whitespace(tmp_path: Path) -> None:
    line = post(1).replace('"event": "post",', '"event": "post",\r')
    code, message, exit_code, output = both(tmp_path, header() + "\n" + line + "\n" + submit(2) + "\n")
    assert code == 0 and exit_code == 0 and "2 events" in message, (message, output)


def test_crlf_line_ends_are_line_ends(tmp_path: Path) -> None:
    code, message, _, _ = both(tmp_path, header() + "\r\n" + post(1) + "\r\n" + submit(2) + "\r\n")
    assert code == 0 and "2 events" in message, message


def test_a_bare_cr_does_not_split_lines(tmp_path: Path) -> None:
    """Two events joined by a bare \\r are one line of bad JSON, not two events."""
    assert_malformed(tmp_path, header() + "\n" + post(1) + "\r" + submit(2) + "\n", 2, "bad JSON")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c"])
def test_unicode_line_separators_do_not_split_lines(tmp_path: Path, separator: str) -> None:
    text = header() + "\n" + post(1, item=f"a{separator}b") + separator + "\n" + submit(2) + "\n"
    code, message, _, _ = both(tmp_path, text)
    assert code == 2 and message.startswith("line 2: bad JSON"), message


def test_a_line_over_the_limit_is_malformed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 1000)
    long_post = post(1, item="x" * 2000)
    assert_malformed(tmp_path, header() + "\n" + long_post + "\n", 2, "longer than the limit of 1,000 bytes")
    assert validate_lines([header(), long_post]).message.startswith("line 2: longer than the limit")
    exact = post(1, item="x" * (1000 - len(post(1, item=""))))
    assert len(exact) == 1000
    assert validate_file(write(tmp_path, header() + "\n" + exact + "\n" + submit(2) + "\n")).code == 0


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    text = (header() + "\n" + post(1) + "\n").encode() + b'{"seq": 2, "thread": "\xff"}\n'
    assert_malformed(tmp_path, text, 3, "not UTF-8")


def test_a_bom_is_refused_by_name(tmp_path: Path) -> None:
    assert_malformed(tmp_path, "\ufeff" + header() + "\n", 1, "BOM")


@pytest.mark.parametrize("text", ["", "\n", "   \n", "\r\n"])
def test_an_empty_or_blank_first_line(tmp_path: Path, text: str) -> None:
    assert_malformed(tmp_path, text, 1, "header")


def test_a_nul_byte_is_malformed(tmp_path: Path) -> None:
    assert_malformed(tmp_path, header() + "\n" + post(1) + "\x00\n", 2, "bad JSON")


# ------------------------------------------------------------------------------ output


def test_a_lone_surrogate_item_is_printed_escaped(tmp_path: Path) -> None:
    line = post(1, submit=False).replace('"item": "a"', '"item": "\\ud800"')
    code, message, exit_code, output = both(tmp_path, header() + "\n" + line + "\n")
    assert code == 1 and exit_code == 1
    assert "\\ud800" in output, output
    path = write(tmp_path, header() + "\n" + line + "\n")
    result = CliRunner().invoke(_app(), ["validate", "--json", str(path)])
    assert result.exit_code == 1
    assert json.loads(result.output)["message"] == message  # the escape decodes to the same item


def test_a_lone_surrogate_prints_in_a_real_process(tmp_path: Path) -> None:
    line = post(1, submit=False).replace('"item": "a"', '"item": "\\udfff"')
    path = write(tmp_path, header() + "\n" + line + "\n")
    root = Path(__file__).resolve().parents[2]
    for args in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-c", "from model_checks.cli import main; main()", "validate", *args, str(path)],
            capture_output=True,
            cwd=root,
            env={**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(root)},
            timeout=60,
        )
        assert done.returncode == 1, done.stderr[-2000:]
        assert b"Traceback" not in done.stderr and b"\\udfff" in done.stdout, done.stdout


def test_rich_markup_in_an_item_is_printed_literally(tmp_path: Path) -> None:
    for item in ("[/x]", "[bold]b[/bold]", "[red]"):
        line = post(1, item=item, submit=False)
        code, _, exit_code, output = both(tmp_path, header() + "\n" + line + "\n")
        assert code == 1 and exit_code == 1 and item in output, output


def test_a_huge_item_is_cut_in_text_and_kept_in_json(tmp_path: Path) -> None:
    big = "x" * 5_000_000
    take = json.dumps({"seq": 3, "thread": "w0", "event": "take", "lane": 1})
    path = write(tmp_path, "\n".join([header(), post(1, item=big), submit(2), take]) + "\n")
    verdict = validate_file(path)
    assert verdict.code == 1 and len(verdict.message) < 1000
    text = CliRunner().invoke(_app(), ["validate", str(path)])
    assert text.exit_code == 1 and len(text.output) < 20_000 and "characters truncated" in text.output
    whole = CliRunner().invoke(_app(), ["validate", "--json", str(path)])
    assert whole.exit_code == 1
    assert json.loads(whole.output)["last_states"][0]["queue"]["0"] == [big]


def test_a_huge_item_in_a_rejection_message_is_cut() -> None:
    big = "y" * 1_000_000
    invoke = json.dumps({"seq": 1, "thread": "w0", "event": "invoke", "lane": 0, "item": big})
    for engine in ("fast", "spec"):
        verdict = validate_lines([header(), invoke], engine=engine)
        assert verdict.code == 1 and len(verdict.message) < 2000, verdict.message[:300]
    gate = json.dumps({"seq": 1, "thread": "w0", "event": "process", "actor": 0, "item": big})
    verdict = validate_lines([header("schedule-gate"), gate])
    assert verdict.code == 1
    text = CliRunner().invoke(_app(), ["validate", "-"], input=(header("schedule-gate") + "\n" + gate + "\n"))
    assert text.exit_code == 1 and len(text.output) < 20_000, text.output[:300]


def test_a_wrongly_typed_huge_value_is_named_briefly(tmp_path: Path) -> None:
    line = json.dumps({"seq": 1, "thread": "p0", "event": "submit", "lane": "z" * 1_000_000})
    verdict = validate_lines([header(), line])
    assert verdict.code == 2 and verdict.line == 2 and len(verdict.message) < 2000, verdict.message[:300]


# ------------------------------------------------------------------------------ stdin


def test_dash_reads_the_trace_from_stdin(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(_app(), ["validate", "-"], input=header() + "\n" + post(1) + "\n" + submit(2) + "\n")
    assert ok.exit_code == 0 and "2 events" in ok.output, ok.output
    bad = runner.invoke(_app(), ["validate", "--json", "-"], input=header(lanes=2.0) + "\n")
    assert bad.exit_code == 2 and json.loads(bad.output)["line"] == 1
    empty = runner.invoke(_app(), ["validate", "-"], input="")
    assert empty.exit_code == 2 and "line 1" in empty.output


def test_validate_stream_reads_binary() -> None:
    import io

    verdict = validate_stream(io.BytesIO((header() + "\n" + post(1) + "\n").encode()))
    assert verdict.code == 0 and verdict.prefix


def test_a_directory_is_not_a_trace(tmp_path: Path) -> None:
    result = CliRunner().invoke(_app(), ["validate", str(tmp_path)])
    assert result.exit_code == 2 and "not a file" in result.output


@pytest.mark.parametrize("design", ["work-lane", "schedule-gate", "akka-mailbox"])
def test_an_unhashable_event_or_design_is_malformed(tmp_path: Path, design: str) -> None:
    """Found by the fuzz suite: `"event": []` and `"design": {}` were TypeErrors."""
    line = json.dumps({"seq": 1, "thread": "p0", "event": [], "lane": 0, "actor": 0, "mailbox": 0})
    assert_malformed(tmp_path, header(design) + "\n" + line + "\n", 2, "event")
    odd = json.loads(header(design))
    odd["design"] = {"a": 1}
    assert_malformed(tmp_path, json.dumps(odd) + "\n", 1, "design")


@pytest.mark.parametrize("design", ["work-lane", "schedule-gate", "akka-mailbox"])
def test_a_line_without_an_event_name_is_named_so(design: str) -> None:
    # A review's finding: the schema's words guessed at an event ("'outcome' is a required
    # property" for a post without its name; "'lane' is ..." for a second header).
    second_header = validate_lines([header(design), header(design)])
    assert (second_header.code, second_header.line) == (2, 2)
    assert "a second header" in second_header.message
    nameless = validate_lines([header(design), json.dumps({"seq": 1, "thread": "p0", "lane": 0})])
    assert (nameless.code, nameless.line) == (2, 2)
    assert "has no `event` field" in nameless.message


def test_an_unknown_design_is_named() -> None:
    # A review's finding: a header naming an unknown design was judged as a work-lane header
    # ("design: 'work-lane' was expected").
    verdict = validate_lines([header(design="work-lane").replace('"work-lane"', '"foo"')])
    assert (verdict.code, verdict.line) == (2, 1)
    assert "no design 'foo' with a trace format is registered" in verdict.message
    assert "work-lane" in verdict.message  # the designs it could have named


@pytest.mark.parametrize(
    ("field", "words"),
    [
        ("seq", "seq: a number with a fraction or an exponent (read as 1.0), not an integer"),
        ("lane", "lane: a number with a fraction or an exponent (read as 1.0), not an integer"),
    ],
)
def test_a_fraction_in_a_work_lane_integer_is_named(field: str, words: str) -> None:
    # A review's finding: JSON Schema takes 1.0 for an integer, so the words were "not a well-formed
    # event" with no field named.
    event = json.loads(post(1, lane=1))
    event[field] = 1.0
    verdict = validate_lines([header(), json.dumps(event)])
    assert (verdict.code, verdict.line) == (2, 2)
    assert words in verdict.message
