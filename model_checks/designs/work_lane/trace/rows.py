"""The Work Lane's trace rows of `lanecheck verify`: spec-generated traces allowed, mutant traces rejected."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from model_checks.conformance.export import export, lines
from model_checks.conformance.validator import validate_file, validate_lines
from model_checks.explorer.check import check
from model_checks.explorer.counterexample import counterexample_events
from model_checks.explorer.search import Options
from model_checks.registry import design
from model_checks.verify import VerifyRow


def rows(quick: bool) -> Iterator[VerifyRow]:
    d = design("work-lane")
    config = "small"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        paths = export(Path(tmp), d.spec, d.config(config), name=f"work-lane-{config}")
        verdicts = [validate_file(p) for p in paths]
    allowed = sum(v.allowed for v in verdicts)
    yield VerifyRow(
        "conformance",
        f"work-lane [{config}] spec-generated traces",
        "allowed",
        "allowed" if verdicts and allowed == len(verdicts) else "rejected",
        f"{allowed}/{len(verdicts)} covering traces allowed",
        time.perf_counter() - started,
    )
    for m in d.mutants.values():
        started = time.perf_counter()
        constants = m.constants(d.config(m.config))
        result = check(m.spec, constants, Options(liveness=False))
        if result.counterexample is None:
            subject = f"trace of --variant {m.name}"
            yield VerifyRow("conformance", subject, "rejected", "no counterexample", "", 0.0)
            continue
        events = counterexample_events(result.counterexample)
        verdict = validate_lines(list(lines(constants, events)))
        actual = "rejected" if verdict.code == 1 else ("allowed" if verdict.allowed else "malformed")
        yield VerifyRow(
            "conformance",
            f"trace of --variant {m.name}",
            "rejected",
            actual,
            f"seq {verdict.seq} of {len(events)}, rule {verdict.rule}",
            time.perf_counter() - started,
        )
