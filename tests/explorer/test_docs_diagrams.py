"""The state diagrams in docs/work-lane-spec.md are what the spec generates today."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.commands.diagram import diagram_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "work-lane-spec.md"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("component", ["lane", "worker", "producer", "scheduler"])
def test_doc_diagram_is_current(component: str) -> None:
    assert diagram_text("work-lane", component) in DOC.read_text()


def test_unknown_component_is_refused() -> None:
    with pytest.raises(KeyError, match="known"):
        diagram_text("work-lane", "nope")
