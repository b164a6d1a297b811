"""The side-by-side review of the designs (docs/designs.md), computed rather than typed.

Every number in the generated table comes from the specs, the explorer and the
reference sources as they are now; a test checks the document still says so.
"""

from __future__ import annotations

import importlib.util
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.registry import DESIGNS
from spec.language import EventuallyAlways, Instance


def code_lines(path: Path) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    source = path.read_text()
    lines: set[int] = set()
    previous = tokenize.INDENT
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.ENDMARKER:
            break
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = tok.type if tok.type != tokenize.COMMENT else previous
            continue
        is_docstring = tok.type == tokenize.STRING and previous in (
            tokenize.INDENT,
            tokenize.NEWLINE,
            tokenize.DEDENT,
        )
        previous = tok.type
        if is_docstring:
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines)


@dataclass(frozen=True)
class Row:
    design: str
    variables: list[str]
    states: int
    transitions: int
    verdict: str
    invariants: list[str]
    liveness: list[str]
    spec_mutants: int
    spec_mutants_caught: int
    reference_mutants: int
    reference_lines: int


def row(name: str) -> Row:
    d = DESIGNS[name]
    constants = d.config("compare")
    state = Instance(d.spec, constants).initial_states()[0]
    result = check(d.spec, constants, Options(), config="compare")
    caught = 0
    for m in d.mutants.values():
        r = check(m.spec, m.constants(d.config(m.config)), Options())
        caught += r.violation is not None and r.violation.name == m.expect
    # distinct seeded bugs (one bug may be shown in more than one scenario: "mutant-2x2/<bug>")
    ref_mutants = {s.name.rsplit("/", 1)[-1] for s in d.harness().values() if s.must_fail}
    return Row(
        design=name,
        variables=list(state._fields),
        states=result.stats.states,
        transitions=result.stats.transitions,
        verdict=result.verdict,
        invariants=[inv.name for inv in d.spec.invariants],
        liveness=[
            f"{p.name} ({'<>[]' if isinstance(p, EventuallyAlways) else '~>'})" for p in d.spec.properties
        ],
        spec_mutants=len(d.mutants),
        spec_mutants_caught=caught,
        reference_mutants=len(ref_mutants),
        reference_lines=sum(code_lines(_source(module)) for module in d.reference_modules),
    )


def _source(module: str) -> Path:
    found = importlib.util.find_spec(module)
    if found is None or found.origin is None:
        raise ModuleNotFoundError(f"no source for the reference module {module}")
    return Path(found.origin)


def markdown() -> str:
    """The table over the designs that run the shared ``compare`` workload (the work-lane family)."""
    rows = [row(name) for name, d in DESIGNS.items() if "compare" in d.configs]
    header = "| | " + " | ".join(r.design for r in rows) + " |"
    lines = [header, "|---" * (len(rows) + 1) + "|"]

    def add(label: str, cells: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    add("state variables", [", ".join(f"`{v}`" for v in r.variables) for r in rows])
    add("distinct states (compare workload)", [f"{r.states:,}" for r in rows])
    add("transitions (compare workload)", [f"{r.transitions:,}" for r in rows])
    add("verdict", [r.verdict for r in rows])
    add("invariants", [", ".join(r.invariants) for r in rows])
    add("liveness (weak fairness)", [", ".join(r.liveness) for r in rows])
    add("spec mutants caught", [f"{r.spec_mutants_caught} / {r.spec_mutants}" for r in rows])
    add("reference mutants", [str(r.reference_mutants) for r in rows])
    add("reference code lines", [str(r.reference_lines) for r in rows])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
