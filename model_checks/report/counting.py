"""Each configuration's state count, by the explorer under a time cap per configuration.

A count cut short by the cap is never shown as a count: it says "not counted (over N s)".
Liveness is left out: a count needs the safety search only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model_checks.design import Design
from model_checks.explorer.check import check
from model_checks.explorer.search import HOLDS, INCOMPLETE, Options
from spec.language import SpecError

# Seconds per configuration: the quick one (every page's graphs and coverage use it), the others.
QUICK_CONFIG_CAP = 60.0
OTHER_CAP = 15.0
OTHER_CAP_QUICK = 1.5


@dataclass(frozen=True)
class ConfigCount:
    config: str
    constants: Any
    text: str  # what the page shows in the count column
    seconds: float
    coverage: dict[str, int] = field(default_factory=dict)  # action -> firings (complete searches only)
    complete: bool = False
    states: int = 0  # reachable states (complete searches only)


def count_config(design: Design, name: str, cap: float) -> ConfigCount:
    try:
        constants = design.config(name)
        result = check(design.spec, constants, Options(liveness=False, time_limit=cap), config=name)
    except (SpecError, ValueError, KeyError) as problem:
        return ConfigCount(name, None, f"not counted: {problem}", 0.0)
    s = result.stats
    figures = f"{s.states:,} states, {s.transitions:,} transitions, depth {s.depth}"
    if result.verdict == HOLDS:
        return ConfigCount(name, constants, figures, s.seconds, s.coverage, True, s.states)
    if result.verdict == INCOMPLETE:
        reason = result.incomplete_reason or ""
        if "time" in reason:
            text = f"not counted (over {cap:g} s; {s.states:,} states seen by then)"
        else:
            text = f"not counted ({reason}; {s.states:,} states seen)"
        return ConfigCount(name, constants, text, s.seconds)
    assert result.violation is not None
    text = (
        f"stopped at a violation of {result.violation.name} after {s.states:,} states"
        f" ({result.violation.reason})"
    )
    return ConfigCount(name, constants, text, s.seconds)


def count_all(design: Design, quick: bool) -> list[ConfigCount]:
    """Every configuration; the one ``verify --quick`` checks gets the longer cap (it must be counted)."""
    return [
        count_config(
            design,
            name,
            QUICK_CONFIG_CAP if name == design.quick else (OTHER_CAP_QUICK if quick else OTHER_CAP),
        )
        for name in design.configs
    ]
