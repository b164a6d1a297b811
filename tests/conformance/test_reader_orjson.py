"""The trace reader's fast parser (orjson) reads every line as the stdlib's strict reader does.

``reader.parse_line`` tries orjson first and keeps its object only where the two cannot differ (a
flat object, no float anywhere: orjson reads an integer beyond 64 bits as a float). Each line below
is read both ways, with ``reader._FAST`` set and unset, and both must give the same value, types
included (``1``, ``1.0`` and ``True`` are equal in Python), or the same ``Malformed`` message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model_checks.conformance import reader
from model_checks.conformance.reader import parse_line
from model_checks.conformance.verdict import Malformed

orjson = pytest.importorskip("orjson", reason="orjson is a dependency: `pip install -e .` installs it")


def typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it, so that equal values of other types differ."""
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, repr(value))


def outcome(text: str) -> tuple[str, Any]:
    try:
        return "value", typed(parse_line(text, 7))
    except Malformed as problem:
        return "malformed", str(problem)


def both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, Any], tuple[str, Any]]:
    with monkeypatch.context() as patched:
        patched.setattr(reader, "_FAST", orjson.loads)
        fast = outcome(text)
    with monkeypatch.context() as patched:
        patched.setattr(reader, "_FAST", None)
        plain = outcome(text)
    return fast, plain


LINES = [
    '{"seq":1,"thread":"p0","event":"post","lane":0,"item":"a","result":"ok","submit":true}',
    '{"seq":1,"thread":"w0","event":"discard","lane":0,"items":["a",2,null,[3]]}',
    '{"item":18446744073709551615}',  # the largest integer orjson reads as one
    '{"item":18446744073709551616}',  # beyond: orjson would give a float
    '{"item":-9223372036854775809}',
    '{"items":[1,[2,[123456789012345678901234567890]]]}',
    '{"item":1.0}',
    '{"item":1e400}',  # orjson refuses it; the stdlib reads infinity
    '{"item":-0}',
    '{"item":"\\ud800"}',  # a lone surrogate: orjson refuses it, the stdlib reads it
    '{"item":"\\ud83d\\ude00"}',
    '{"item":"x\\u0000y"}',
    '{"item":"x\ty"}',  # a raw tab in a string: not JSON
    '{"\\u0061":1,"a":2}',  # a key repeated under an escape
    '{"a":1,"a":2}',
    '{"a":{"b":1,"b":2}}',
    '{"a":"b:c"}',  # a colon in a string: the slow path, the same value
    ' {"a":1}',
    '{"a":1} ',
    '{"a":1}\r',
    '\ufeff{"a":1}',
    '{"a":1}x',
    '{"a":NaN}',
    '{"a":01}',
    '{"a":[1,]}',
    "{'a':1}",
    "[1,2]",
    '"text"',
    "",
    "   ",
]


@pytest.mark.parametrize("text", LINES)
def test_a_line_reads_the_same_with_orjson(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, plain = both_ways(text, monkeypatch)
    assert fast == plain


def test_an_integer_beyond_64_bits_stays_an_integer(monkeypatch: pytest.MonkeyPatch) -> None:
    # The case the float guard is for: without it orjson's float would reach the trace's checks.
    with monkeypatch.context() as patched:
        patched.setattr(reader, "_FAST", orjson.loads)
        assert parse_line('{"item":18446744073709551616}', 1) == {"item": 18446744073709551616}
        assert type(parse_line('{"item":18446744073709551616}', 1)["item"]) is int


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4), max_leaves=8)
OBJECTS = st.dictionaries(
    st.text(max_size=6), VALUES | st.dictionaries(st.text(max_size=3), SCALARS), max_size=6
)


@settings(max_examples=300, deadline=None)
@given(obj=OBJECTS, ascii_only=st.booleans(), compact=st.booleans())
def test_any_object_reads_the_same_with_orjson(obj: dict[str, Any], ascii_only: bool, compact: bool) -> None:
    text = json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":") if compact else None)
    with pytest.MonkeyPatch.context() as patched:
        fast, plain = both_ways(text, patched)
    assert fast == plain


@settings(max_examples=300, deadline=None)
@given(
    obj=OBJECTS, cut=st.integers(min_value=0, max_value=200), junk=st.sampled_from(["", ",", "}", "x", "\t"])
)
def test_a_damaged_line_is_refused_alike(obj: dict[str, Any], cut: int, junk: str) -> None:
    text = json.dumps(obj)
    damaged = text[:cut] + junk + text[cut + 1 :]
    with pytest.MonkeyPatch.context() as patched:
        fast, plain = both_ways(damaged, patched)
    assert fast == plain
