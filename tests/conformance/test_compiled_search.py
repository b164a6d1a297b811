"""The compiled trace search (setup.py's ``SEARCH_FILES``, mypyc) against its Python source.

Both engines judge one corpus of every searched design's traces (a short bench trace of the
reference, its prefix, traces perturbed into other verdicts, the Schedule Gate's reference
mutants' failing traces and the checked-in fixtures): every verdict must be the same, field for
field and word for word. ``conformance.search_decision`` (``model_checks/compiled_choice.py``)
picks the engine: its stale, partial, unreachable and pure cases are checked on a scratch tree.
The spec's functions (``spec/function.py``, a hidden group) run compiled beside the compiled
search, and as their source wherever the spec is imported first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from model_checks import conformance
from model_checks.bench.traces import trace_benches
from model_checks.compiled_choice import EARLIER, HIDDEN, paths
from model_checks.conformance import reader
from model_checks.conformance.designs import design_format
from model_checks.conformance.streamed import DesignFormat
from tests.compiled import ROOT, assert_installed_compiled, fresh_interpreter
from tests.helpers.perturbed import perturbed, write_lines

FIXTURES = [
    ROOT / "tests/gate/fixtures/surplus_after_idle.jsonl",
    ROOT / "tests/work_lane_lockfree/fixtures/capacity_linearised.jsonl",
    ROOT / "tests/work_lane_lockfree/fixtures/capacity_logged_late.jsonl",
]

# Run in a fresh interpreter so that the environment picks the engine (``LANECHECK_PURE``).
JUDGE = """
import dataclasses, json, sys
from pathlib import Path
from model_checks import conformance
from model_checks.conformance import validate_file
import model_checks.conformance.reader as reader, model_checks.conformance.search as search
import model_checks.conformance.streamed as streamed, spec.function as function
out = {
    "kind": conformance.search_kind(),
    "spec_kind": conformance.spec_values_kind(),
    "files": [reader.__file__, search.__file__, streamed.__file__, function.__file__],
    "verdicts": {},
}
for arg in sys.argv[1:]:
    path, complete = arg.rsplit("|", 1)
    v = validate_file(Path(path), complete=complete == "1")
    out["verdicts"][Path(path).name] = dataclasses.asdict(v)
print(json.dumps(out, default=repr, sort_keys=True))
"""


def _searched() -> dict[str, Any]:
    return {name: b for name, b in trace_benches().items() if isinstance(design_format(name), DesignFormat)}


def _gate_mutant_traces(out: Path) -> list[Path]:
    from model_checks.designs.schedule_gate.reference_mutants import REFERENCE_MUTANTS
    from model_checks.designs.schedule_gate.scenarios import MUTANT_SCENARIOS, failure_lines, gate_program
    from model_checks.harness import check

    made = []
    for name, (kwargs, options) in sorted(MUTANT_SCENARIOS.items()):
        result = check(gate_program(REFERENCE_MUTANTS[name].build, traced=True, **kwargs), options)
        assert result.failure is not None, result.summary()
        made.append(write_lines(out / f"gate-mutant-{name}.jsonl", failure_lines(result.failure, **kwargs)))
    return made


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Arguments for ``JUDGE``: ``path|complete`` of every trace of the corpus."""
    out = tmp_path_factory.mktemp("corpus")
    args: list[str] = []
    for name, bench in _searched().items():
        path = out / f"{name}.jsonl"
        bench.write(path, bench.quick_sizes[1], 0)
        lines = path.read_text().splitlines()
        complete = "1" if bench.complete else "0"
        args += [f"{p}|{complete}" for p in [path, *perturbed(name, lines, out)]]
    args += [f"{p}|0" for p in [*_gate_mutant_traces(out), *FIXTURES]]
    return args


def _judged(args: list[str], *, pure: bool) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(fresh_interpreter(JUDGE, *args, pure=pure))
    return found


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The traces whose verdicts differ between two runs of ``JUDGE``, with the fields that differ."""
    found = []
    for name in sorted(set(a) | set(b)):
        va, vb = a.get(name, {}), b.get(name, {})
        fields = sorted(k for k in set(va) | set(vb) if va.get(k) != vb.get(k))
        if fields:
            found.append(f"{name}: {', '.join(fields)}")
    return found


@pytest.mark.timeout(600)
def test_compiled_and_pure_searches_give_the_same_verdicts(corpus: list[str]) -> None:
    compiled = _judged(corpus, pure=False)
    if compiled["kind"] != "compiled" or compiled["spec_kind"] != "compiled":
        pytest.skip("the trace search is not compiled here (setup.py SEARCH_FILES): nothing to compare")
    pure = _judged(corpus, pure=True)
    assert pure["kind"] == pure["spec_kind"] == "pure", pure
    assert all(f.endswith(".py") for f in pure["files"]), pure["files"]
    assert not any(f.endswith(".py") for f in compiled["files"]), compiled["files"]
    assert differences(compiled["verdicts"], pure["verdicts"]) == []
    # Not a vacuous agreement: every design has traces both accepted and rejected.
    verdicts = compiled["verdicts"]
    for name in _searched():
        codes = {v["code"] for trace, v in verdicts.items() if trace.startswith(f"{name}")}
        assert {0, 1} <= codes, (name, codes)
    mutants = [v for trace, v in verdicts.items() if trace.startswith("gate-mutant-")]
    assert len(mutants) == 5 and all(v["code"] == 1 for v in mutants), mutants


def test_differences_name_a_verdict_that_differs_in_its_words_only() -> None:
    same = {"code": 1, "seq": 4, "message": "seq 4: no behaviour"}
    assert differences({"t": same}, {"t": dict(same)}) == []
    assert differences({"t": same}, {"t": {**same, "message": "seq 4: other words"}}) == ["t: message"]
    assert differences({"t": same}, {}) == ["t: code, message, seq"]


def _tree(tmp_path: Path, *, compiled: bool, source_newer: bool = False) -> str:
    """A scratch checkout: the search's sources and, with ``compiled``, a compiled module for each."""
    root = str(tmp_path)
    for name in conformance.SEARCH:
        source, built = map(Path, (paths(name, root)[0], paths(name, root)[1][0]))
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text("")
        if compiled:
            built.write_bytes(b"no group named here")
            older, newer = (built, source) if source_newer else (source, built)
            os.utime(older, (1_000_000, 1_000_000))
            os.utime(newer, (2_000_000, 2_000_000))
    return root


def test_the_decision_runs_the_sources_when_a_compiled_module_is_stale(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    assert conformance.search_decision(root=_tree(tmp_path / "fresh", compiled=True)) == (
        "compiled",
        "built at install",
    )
    kind, why = conformance.search_decision(root=_tree(tmp_path / "stale", compiled=True, source_newer=True))
    assert kind == "pure" and "reader.py is newer than its compiled module" in why, why
    assert conformance.search_decision(root=_tree(tmp_path / "none", compiled=False)) == (
        "pure",
        "not compiled at install",
    )
    monkeypatch.setenv("LANECHECK_PURE", "1")
    assert conformance.search_decision(root=_tree(tmp_path / "fresh2", compiled=True)) == (
        "pure",
        "LANECHECK_PURE=1",
    )


def test_the_decision_runs_the_sources_when_the_group_is_partly_compiled_or_not_importable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    root = _tree(tmp_path / "part", compiled=True)
    Path(paths(conformance.SEARCH[-1], root)[1][0]).unlink()
    assert conformance.search_decision(root=root) == (
        "pure",
        "only some of trace search's modules were compiled",
    )
    # an editable install made before the group existed maps no such top-level module
    root = _tree(tmp_path / "unmapped", compiled=True)
    for name in conformance.SEARCH:
        Path(paths(name, root)[1][0]).write_bytes(b"... 0123456789abcdef0000__mypyc ...")
    kind, why = conformance.search_decision(root=root)
    assert kind == "pure" and why == "0123456789abcdef0000__mypyc is not importable (the install predates it)"


def test_the_installed_search_is_the_compiled_one() -> None:
    # the compiled-vs-pure comparison skips without a compiled search: this says why it is missing
    assert_installed_compiled(conformance.search_kind(), conformance.describe_search(), conformance.SEARCH[0])
    assert reader.search_kind() == conformance.search_kind()  # where the docs and notes ask


SPEC_FIRST = """
import json, pickle, sys
if sys.argv[1] == "spec first":
    import spec.function
from model_checks import conformance
import spec.function
kind, describe = conformance.spec_values_kind(), conformance.describe_spec_values()
f = spec.function.Function(("a", "b"), (1, (2, "x")))
back = pickle.loads(pickle.dumps([f, f.except_("a", 3)]))
pickled = back == [f, f.except_("a", 3)] and back[0]._hash == f._hash and type(back[0]) is type(f)
print(json.dumps([kind, describe, spec.function.__file__, pickled]))
"""


def _spec_values(order: str, *, pure: bool = False) -> tuple[str, str, str]:
    kind, describe, file, pickled = json.loads(fresh_interpreter(SPEC_FIRST, order, pure=pure))
    assert pickled, (order, pure)  # compiled or not, a ``Function`` pickles as it did
    return kind, describe, file


def test_the_spec_functions_run_compiled_only_when_decided_before_the_spec_is_imported() -> None:
    kind, describe, file = _spec_values("search first")
    assert_installed_compiled(kind, describe, "spec.function", loaded=file)
    assert file == paths("spec.function", str(ROOT), hidden=True)[1][0]
    assert Path(file).name.startswith("function" + HIDDEN + ".")
    # Imported first, the spec loads the source: a plain import never finds the hidden loader.
    source = str(ROOT / "spec/function.py")
    assert _spec_values("spec first") == ("pure", f"pure spec functions ({EARLIER})", source)
    assert _spec_values("search first", pure=True) == (
        "pure",
        "pure spec functions (LANECHECK_PURE=1)",
        source,
    )
