"""docs/reference.md's examples run as written and print what the page says."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


def _blocks(lang: str) -> list[str]:
    """The fenced blocks whose info string is ``lang``, in page order."""
    blocks: list[str] = []
    current: list[str] | None = None
    info = ""
    for line in DOC.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, info = [], line[3:].strip()
            else:
                if info == lang:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


@pytest.mark.timeout(20)
def test_the_toolkit_example_runs_and_prints_what_the_doc_says() -> None:
    example = _blocks("python")[0]
    expected = _blocks("")[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, str(DOC), "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == expected


@pytest.mark.timeout(20)
def test_the_factory_example_runs() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_blocks("python")[1], str(DOC), "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == "lane 0: hello\n"
