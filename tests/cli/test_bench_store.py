"""`lanecheck bench NAME --store URL`: passed to the benches of a store, refused for the others."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.commands import bench


def test_only_a_store_bench_takes_a_store() -> None:
    assert bench.takes_store("jobs")
    assert not bench.takes_store("harness")


@pytest.mark.parametrize(
    ("name", "store", "said"),
    [("harness", "sqlite:///x.db", "runs on no store"), ("jobs", " ", "empty store URL")],
)
def test_a_store_where_none_goes_is_refused_before_any_work(name: str, store: str, said: str) -> None:
    result = CliRunner().invoke(app, ["bench", name, "--store", store])
    assert result.exit_code == 2
    assert said in result.output


@pytest.mark.timeout(120)
def test_the_store_reaches_the_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def fake(quick: bool = False, store: str | None = None) -> dict[str, object]:
        seen.update(quick=quick, store=store)
        return {"ok": True}

    module = __import__(bench.benches()["jobs"][0], fromlist=["bench"])
    monkeypatch.setattr(module, "bench", fake)
    result = CliRunner().invoke(app, ["bench", "jobs", "--quick", "--store", "postgresql://u@h/db", "--json"])
    assert result.exit_code == 0, result.output
    assert seen == {"quick": True, "store": "postgresql://u@h/db"}
