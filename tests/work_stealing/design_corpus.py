"""A design's corpus of traces with the verdict both engines must give (shared by
tests/work_stealing/test_corpus.py and tests/event_pool/test_corpus.py).

A folder of ``*.jsonl`` files named as the work-lane corpus's (``valid_[prefix_]NAME``,
``invalid_rN_NAME``, ``malformed_NAME``; tests/conformance/corpus) and its ``manifest.json``: each
file's verdict as tests/conformance/test_corpus.py records it (``code``, then ``prefix`` or ``seq``
and ``rule`` or ``line``). An entry may say, under ``spec``, how the spec engine departs:
``cannot_judge`` (the words of its usage error: the trace is not judged, never called malformed) or
``disagrees`` (a known disagreement, listed in the design's doc: a strict xfail, so that a fix
that makes the engines agree shows)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance import ENGINES, validate_file
from tests.conformance.test_corpus import _observed


def manifest(folder: Path) -> dict[str, dict[str, Any]]:
    loaded: dict[str, dict[str, Any]] = json.loads((folder / "manifest.json").read_text())
    return loaded


def cases(folder: Path) -> list[Any]:
    """One ``(name, engine)`` case per file and engine; a known disagreement is a strict xfail."""
    out = []
    for name, entry in sorted(manifest(folder).items()):
        for engine in ENGINES:
            why = entry.get("spec", {}).get("disagrees") if engine == "spec" else None
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(name, engine, marks=marks, id=f"{name}-{engine}"))
    return out


def check_case(folder: Path, name: str, engine: str) -> None:
    """The file's verdict from ``engine`` is the manifest's."""
    entry = dict(manifest(folder)[name])
    departs = entry.pop("spec", {})
    path = folder / name
    if engine == "spec" and "cannot_judge" in departs:
        with pytest.raises(ValueError, match=departs["cannot_judge"]):
            validate_file(path, engine=engine)
        return
    assert _observed(path, engine) == entry


def check_complete(folder: Path) -> None:
    """Every file has its entry, each name says its verdict, and the folder holds both kinds."""
    entries = manifest(folder)
    assert {p.name for p in folder.glob("*.jsonl")} == set(entries)
    for name, entry in entries.items():
        if entry["code"] == 0:
            assert name.startswith("valid_prefix_" if entry["prefix"] else "valid_"), name
        elif entry["code"] == 1:
            assert name.startswith(f"invalid_r{entry['rule']}_"), name
        else:
            assert name.startswith("malformed_"), name
    assert {e["code"] for e in entries.values()} >= {0, 1}


def corpus_tests(folder: Path) -> tuple[Callable[[str, str], None], Callable[[], None]]:
    """The two tests of a design's corpus test module (``test_corpus_case, test_corpus_is_complete =
    corpus_tests(...)``): each file's verdict from both engines, and the folder complete."""

    @pytest.mark.parametrize(("name", "engine"), cases(folder))
    def test_corpus_case(name: str, engine: str) -> None:
        check_case(folder, name, engine)

    def test_corpus_is_complete() -> None:
        check_complete(folder)

    return test_corpus_case, test_corpus_is_complete
