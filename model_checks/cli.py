"""The `lanecheck` command line: one sub-command per job, each defined in ``model_checks.commands``."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="lanecheck",
    help="Formally checked work-lane schedulers: explore specs, run the reference under a "
    "controlled scheduler, validate traces.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(
    help="Benchmarks: ratios against baselines measured in the same run.", no_args_is_help=True
)
app.add_typer(bench_app, name="bench")

# Each module defines ``register(app)``; bench modules ``register_bench(bench_app)``.
COMMANDS = ["check", "verify", "diagram", "explore", "validate", "traces", "link"]
BENCHES = ["bench"]

for _name in COMMANDS:
    importlib.import_module(f"model_checks.commands.{_name}").register(app)
for _name in BENCHES:
    importlib.import_module(f"model_checks.commands.{_name}").register_bench(bench_app)


def main() -> None:
    app()
