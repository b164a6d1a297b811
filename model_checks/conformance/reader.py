"""The trace reader's boundary, shared by every design: strict JSON Lines within documented limits.

Everything a trace can throw at a validator is refused here, before an engine sees it, with
``Malformed`` naming the line and the problem (exit code 2):

* lines are split on ``\\n`` only (``\\r\\n`` loses its ``\\r``); a bare ``\\r`` is JSON whitespace
  inside a line, never a line break; a line is at most ``MAX_LINE_BYTES`` long and UTF-8;
* JSON is strict: no duplicate keys in an object, no ``NaN`` / ``Infinity``, arrays and objects
  nested at most ``MAX_DEPTH`` deep — measured *before* the decoder recurses;
* a header's sizes are integers (not booleans, not ``2.0``), at most the limits in
  the design's ``header_limits``, so no header can make an engine allocate or loop beyond them.

The limits are documented in docs/trace-format.md ("Limits") and in ``lanecheck validate --help``.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import accumulate
from typing import IO, Any

from model_checks.conformance.verdict import Malformed

MAX_LINE_BYTES = 64 * 1024 * 1024  # one line; for lines given as text, characters
MAX_DEPTH = 32  # nested arrays/objects in one line (an event needs 2; extra fields get the rest)
MAX_INDEXED = 65_536  # lanes, actors, mailboxes, workers: what an engine may hold state for
MAX_SIZE = 2**31 - 1  # capacities, budgets, permits, throughput: only compared, never allocated

Limits = Mapping[str, int]  # a design's header config fields that are sizes -> the largest value


def limits_text() -> str:
    """The limits in one sentence, for help texts and errors."""
    return (
        f"a line is at most {MAX_LINE_BYTES:,} bytes of UTF-8 and nests at most {MAX_DEPTH} deep; "
        f"lanes, actors, mailboxes and workers are at most {MAX_INDEXED:,}; "
        f"capacities, budgets, permits and throughput at most {MAX_SIZE:,}"
    )


# ------------------------------------------------------------------------------ strict JSON


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {_quoted(key)} in an object (a JSON key appears once)")
            seen.add(key)
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)
# The decoder's own scanner: what ``json.loads`` calls, minus its per-call checks and regex passes.
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
# The same without the duplicate-key hook (``parse_line`` says when its object can be trusted).
_SCAN_PLAIN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(  # type: ignore[attr-defined]
    parse_constant=_constant
).scan_once
_FAST: Callable[[str], Any] | None
try:  # a C parser about three times the stdlib scanner's speed on an event's line
    import orjson

    _FAST = orjson.loads
except ImportError:  # not installed (it is a dependency): the stdlib scanner alone
    _FAST = None


def _no_float(value: Any) -> bool:
    """Whether ``value`` (an object's value, from orjson) holds no float: orjson reads an integer
    beyond 64 bits as a float, where the stdlib keeps it an int, so a line with a float goes the
    stdlib's way (event lines seldom have one)."""
    kind = type(value)
    if kind is float:
        return False
    if kind is list:
        for item in value:
            if not _no_float(item):
                return False
    return True


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")  # +1 / -1 as signed bytes


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in ``text``, without recursing (brackets in strings skipped)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = array("b", brackets.encode("ascii").translate(_STEP))
    return max(accumulate(steps), default=0)


def parse_line(text: str, line: int) -> Any:
    """The JSON value of one line; ``Malformed`` naming the line when it is not strict JSON."""
    # Cheap bound first: fewer opening brackets than the limit cannot nest deeper than it.
    if text.count("[") + text.count("{") > MAX_DEPTH or len(text) > MAX_LINE_BYTES:
        _check_shape(text, line)
    # Fast path: orjson (without it, the stdlib's plain scanner), no Python call per object. Its
    # object can hide a repeated key, unless it has as many keys as the line has colons: every
    # key, at any depth, has a colon after it, so then none repeats and nothing nests (a colon
    # inside a string only sends the line the slow way). Whitespace around the object, which
    # orjson takes and the plain scanner does not, is the slow path's to take as well.
    fast = _FAST
    if fast is not None:
        try:
            obj = fast(text)
        except ValueError:  # not JSON, or not as orjson reads it: the stdlib words the error
            obj = None
        if type(obj) is dict and len(obj) == text.count(":"):
            for value in obj.values():
                if not _no_float(value):
                    break
            else:
                return obj
    else:
        try:
            obj, end = _SCAN_PLAIN(text, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end == len(text) and type(obj) is dict and len(obj) == text.count(":"):
            return obj
    try:
        obj, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):
        end = -1
    if end == len(text):
        return obj
    if not text.strip():
        raise Malformed(line, f"line {line}: blank line (not allowed)")
    if text.startswith("\ufeff"):
        raise Malformed(
            line, f"line {line}: starts with a byte order mark (BOM, U+FEFF): JSON Lines have none"
        )
    try:  # the slow path words the error (and takes surrounding whitespace)
        return _DECODER.decode(text)
    except ValueError as problem:
        raise Malformed(line, f"line {line}: bad JSON: {problem}") from None


def _check_shape(text: str, line: int) -> None:
    if len(text) > MAX_LINE_BYTES:
        raise Malformed(line, f"line {line}: longer than the limit of {MAX_LINE_BYTES:,} characters")
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise Malformed(
            line,
            f"line {line}: arrays/objects nested {depth} deep (or brackets unbalanced); "
            f"the limit is {MAX_DEPTH}",
        )


# ------------------------------------------------------------------------------ lines of a file


def stream_lines(stream: IO[bytes]) -> Iterator[str]:
    """The lines of a binary stream as text: split on ``\\n`` only, each bounded and UTF-8.

    ``Malformed`` names the first line that is too long or not UTF-8; memory is one line.
    """
    readline = stream.readline
    limit = MAX_LINE_BYTES + 1  # room for the newline of a line exactly at the limit
    line = 0
    while True:
        raw = readline(limit)
        if not raw:
            return
        line += 1
        if raw.endswith(b"\n"):
            raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
        elif len(raw) >= limit:
            raise Malformed(line, f"line {line}: longer than the limit of {MAX_LINE_BYTES:,} bytes")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as problem:
            raise Malformed(
                line, f"line {line}: not UTF-8 text (byte {problem.start + 1} of the line: {problem.reason})"
            ) from None


def text_lines(lines: Iterable[str]) -> Iterator[str]:
    """Lines given as text, without a trailing ``\\n`` / ``\\r\\n`` (other whitespace is JSON's)."""
    for line in lines:
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        yield line


# ------------------------------------------------------------------------------ the header


def header_problem(obj: Any, limits: Limits | None = None) -> str | None:
    """Why a parsed line 1 is not within the header's types and limits (before its schema), or None.

    The schema says which fields a design's header needs; this says what JSON Schema cannot:
    ``1.0`` is not the integer 1, a boolean is not a size, and a size has an upper bound.
    ``limits`` is the design's own (its trace format's ``header_limits``): which config fields
    are sizes, and the largest each may take (``MAX_INDEXED`` where an engine holds state per
    unit, ``MAX_SIZE`` where it only compares).
    """
    if type(obj) is not dict:
        return None  # the schema words it
    version = obj.get("version")
    if "version" in obj and type(version) is not int:
        return f"version must be the integer 1, not {_shown(version)}"
    config = obj.get("config")
    if limits is None or type(config) is not dict:
        return None
    for name, largest in limits.items():
        if name not in config:
            continue
        value = config[name]
        if type(value) is not int:
            return f"config.{name} must be an integer, not {_shown(value)}"
        if value > largest:
            return (
                f"config.{name} = {_number(value)} is above the limit of {largest:,} "
                "(docs/trace-format.md, Limits)"
            )
    return None


def _shown(value: Any) -> str:
    kind = {bool: "a boolean", float: "a number with a fraction or exponent", str: "a string"}.get(
        type(value), type(value).__name__
    )
    return f"{clip(json.dumps(value, ensure_ascii=True), 40)} ({kind})"


def _number(value: int) -> str:
    text = str(value)
    return text if len(text) <= 30 else f"a {len(text)}-digit number"


def _quoted(key: str) -> str:
    return clip(json.dumps(key, ensure_ascii=True), 80)


# ------------------------------------------------------------------------------ words for people


def clip(text: str, limit: int = 400) -> str:
    """``text`` cut to about ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    return f"{text[:half]}…[{len(text) - 2 * half:,} characters truncated]…{text[-half:]}"


def printable(text: str) -> str:
    """``text`` safe for any UTF-8 output: lone surrogates become ``\\udXXX`` escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def required_ok(
    fields: Mapping[str, tuple[tuple[str, Callable[[Any], bool]], ...]], obj: Any
) -> tuple[tuple[str, Callable[[Any], bool]], ...] | None:
    """The checks of ``obj``'s event if ``obj`` is an event line (a positive int ``seq``, a string
    ``thread``, a known ``event``) whose required ``fields`` pass them; None if it is not."""
    if type(obj) is not dict:
        return None
    seq = obj.get("seq")
    if type(seq) is not int or seq < 1 or type(obj.get("thread")) is not str:
        return None
    event = obj.get("event")
    checks = fields.get(event) if type(event) is str else None  # [] is not a key
    if checks is None:
        return None
    for name, check in checks:
        if name not in obj or not check(obj[name]):
            return None
    return checks


def known_fields(
    obj: dict[str, Any],
    checks: tuple[tuple[str, Callable[[Any], bool]], ...],
    optional: tuple[tuple[str, Callable[[Any], bool]], ...] = (),
) -> dict[str, Any]:
    """The event ``obj`` (``required_ok`` gave its ``checks``; ``optional``: the fields its event
    may have) without the fields its event does not define. The contract ignores an unknown extra
    field, so no engine may read one: an extra ``lane`` on a Stop event names no lane."""
    expected = 3 + len(checks)  # seq, thread, event
    for name, _ in optional:
        if name in obj:
            expected += 1
    if len(obj) == expected:  # the usual line: nothing extra, no copy
        return obj
    known = {"seq": obj["seq"], "thread": obj["thread"], "event": obj["event"]}
    for name, _ in checks:
        known[name] = obj[name]
    for name, _ in optional:
        if name in obj:
            known[name] = obj[name]
    return known


# ------------------------------------------------------------------------------ compiled or source


def search_kind() -> str:
    """ "compiled" or "pure": which trace search this process runs (decided, and kept, by
    ``model_checks/conformance/__init__.py``: this module is one of the group it decides for)."""
    from model_checks import conformance

    return conformance.search_kind()
