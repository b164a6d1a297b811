"""The spec -> implementation comparisons we run, and the generated table of docs/conformance.md.

``CASES`` names each comparison: a ``LinkScenario``, the events compared (``observed``; None =
every event) and whether it is exhaustive within the CI budget (``ci``). The others run from
``lanecheck link compare NAME`` and in the full ``lanecheck verify``, with their bounds stated.

``docs_table(comparisons)`` renders what the docs must say about them: per scenario the traces and
transitions realised, the implementation-only traces and every spec-only trace by class
(``classify``). Execution counts and seconds are left out on purpose: they move with every harness
optimisation, while the classes move only when the reference or the spec changes what it logs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from model_checks.designs.work_lane.link.classify import CLASSES, UNEXPLAINED, class_counts
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS, LinkScenario
from model_checks.designs.work_lane.link.spec_to_impl import Comparison, compare

DOCS_BEGIN = "<!-- link-spec-to-impl:begin (generated: lanecheck link compare --ci --docs) -->"
DOCS_END = "<!-- link-spec-to-impl:end -->"


@dataclass(frozen=True)
class Case:
    name: str
    scenario: LinkScenario
    why: str  # what this scenario exercises
    ci: bool = True
    observed: frozenset[str] | None = None
    # False: too many spec traces to list (``lanecheck link compare NAME --automaton`` counts them)
    listable: bool = True


CASES: dict[str, Case] = {
    c.name: c
    for c in [
        Case("1x2-full-invalid", LINK_SCENARIOS["1x2-full-invalid"], "a full lane, an invalid handle"),
        Case("2x1-cap1-full", LINK_SCENARIOS["2x1-cap1-full"], "two producers race for one slot"),
        Case("1x1-2w", LINK_SCENARIOS["1x1-2w"], "two workers race for one work item"),
        Case("1x2-2w-cap1", LINK_SCENARIOS["1x2-2w-cap1"], "two workers, a post racing the drain"),
        Case("1x1-stop-drain", LINK_SCENARIOS["1x1-stop-drain"], "Stop(drain) racing a post"),
        Case("1x1-stop-discard", LINK_SCENARIOS["1x1-stop-discard"], "Stop(discard) racing a post"),
        Case("1x2-budget1", LINK_SCENARIOS["1x2-budget1"], "two workers, two items, resubmit"),
        Case("2x1-same-lane", LINK_SCENARIOS["2x1-same-lane"], "two producers, two workers", ci=False),
        Case("2x1-stop-discard", LINK_SCENARIOS["2x1-stop-discard"], "Stop(discard), 2 producers", ci=False),
        Case("2x1-stop-drain", LINK_SCENARIOS["2x1-stop-drain"], "Stop(drain), 2 producers", ci=False),
        Case("1x1-2w-stop-drain", LINK_SCENARIOS["1x1-2w-stop-drain"], "Stop(drain), 2 workers", ci=False),
        Case(
            "1x1-2w-stop-discard", LINK_SCENARIOS["1x1-2w-stop-discard"], "Stop(discard), 2 workers", ci=False
        ),
        Case(
            "small",
            LINK_SCENARIOS["small"],
            "the spec's whole `small` configuration (about a billion spec traces)",
            ci=False,
            listable=False,
        ),
    ]
}


def run_case(case: Case, *, time_limit: float | None = None, max_executions: int | None = None) -> Comparison:
    return compare(
        case.scenario, observed=case.observed, time_limit=time_limit, max_executions=max_executions
    )


def docs_table(results: Iterable[tuple[Case, Comparison]]) -> str:
    lines = [
        DOCS_BEGIN,
        "| scenario | exercises | harness | spec traces realised | spec transitions realised "
        "| impl-only | spec-only, by class |",
        "|---|---|---|---|---|---|---|",
    ]
    for case, c in results:
        counts = class_counts(c.spec_only)
        by_class = ", ".join(f"{n} `{name}`" for name, n in counts.items()) or "none"
        lines.append(
            f"| `{case.name}` ({case.scenario.label()}) | {case.why} | {c.harness} "
            f"| {c.common}/{c.spec_traces} | {c.realised_transitions}/{c.spec_transitions} "
            f"| {len(c.impl_only)} | {by_class} |"
        )
    lines += ["", "| class | the spec allows, the reference never logs | why |", "|---|---|---|"]
    for cls in CLASSES:
        lines.append(f"| `{cls.name}` | {cls.ordering} | {cls.why} |")
    lines.append(
        f"| `{UNEXPLAINED}` | a spec-only trace no class above matches | none yet: the tests fail on it |"
    )
    lines.append(DOCS_END)
    return "\n".join(lines)


def docs_block_of(text: str) -> str:
    """The generated block as it stands in a document (``ValueError`` if it is missing)."""
    start = text.index(DOCS_BEGIN)
    end = text.index(DOCS_END, start) + len(DOCS_END)
    return text[start:end]
