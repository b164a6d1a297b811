"""docs/designs.md shows the comparison the specs and sources give today."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.compare import code_lines, markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "designs.md"


@pytest.mark.timeout(300)
def test_comparison_table_is_current() -> None:
    text = DOC.read_text()
    start = text.index("<!-- compare:begin -->") + len("<!-- compare:begin -->\n")
    end = text.index("<!-- compare:end -->")
    assert text[start:end] == markdown()


def test_code_lines_skip_docstrings_comments_and_blanks(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text('"""Doc."""\n\n# comment\nx = 1\n\n\ndef f() -> None:\n    """Doc."""\n    return None\n')
    assert code_lines(f) == 3
