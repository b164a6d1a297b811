"""The golden corpus: every trace gets its expected verdict, from both engines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance import ENGINES, validate_file

CORPUS = Path(__file__).parent / "corpus"
MANIFEST: dict[str, dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())


def _observed(path: Path, engine: str) -> dict[str, Any]:
    v = validate_file(path, engine=engine)
    got: dict[str, Any] = {"code": v.code}
    if v.code == 0:
        got["prefix"] = v.prefix
    elif v.code == 1:
        got.update(seq=v.seq, rule=v.rule)
        assert v.message.startswith(f"seq {v.seq}: ")
        assert v.last_states
    else:
        got["line"] = v.line
        assert f"line {v.line}" in v.message
    return got


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_corpus_case(name: str, engine: str) -> None:
    assert _observed(CORPUS / name, engine) == MANIFEST[name]


def test_corpus_is_complete() -> None:
    rules = {e["rule"] for e in MANIFEST.values() if e["code"] == 1}
    assert rules >= {1, 2, 3, 4, 5, 6, 7}
    assert sum(1 for e in MANIFEST.values() if e["code"] == 1) >= 25
    assert sum(1 for e in MANIFEST.values() if e["code"] == 2) >= 10
    assert any(e.get("prefix") for e in MANIFEST.values())  # rule 8: prefixes are judged as prefixes
    assert {p.name for p in CORPUS.glob("*.jsonl")} == set(MANIFEST)


def test_prefix_lists_what_is_pending() -> None:
    v = validate_file(CORPUS / "valid_prefix_item_pending.jsonl")
    assert v.allowed and v.prefix and v.pending["items"] == {"0": ["a"]}
    v = validate_file(CORPUS / "valid_prefix_submission_owed.jsonl")
    assert v.pending["submissions"] == {"p0": 1} and "owed submissions: p0 -> lane 1" in v.message


def test_lost_wakeup_message() -> None:
    v = validate_file(CORPUS / "invalid_r5_lost_wakeup.jsonl")
    expected = 'seq 7: drain_end idle on lane 0 while it still holds item "b" — that item would never run'
    assert v.message == expected + " (lost wakeup)"
