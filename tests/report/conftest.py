"""The plug-in test design (``tests/plugin_design``) registered while this package runs (package scope:
the tests elsewhere see the registry as it was), and its site built once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from model_checks.report import write_site
from tests.architecture.test_plugin_design import plugin_installed


@pytest.fixture(scope="package")
def plugin_registered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with plugin_installed(tmp_path_factory.mktemp("plugin-site")) as site:
        yield site


@pytest.fixture(scope="package")
def handoff_site(plugin_registered: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the plug-in design alone, quick: its index.html."""
    return write_site(tmp_path_factory.mktemp("report"), ["handoff"], quick=True)
