"""``admission.decide``: each check denies with its reason, in the documented order; memory sources."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from reference.jobs import sysmem
from reference.jobs.admission import (
    ORDER,
    Candidate,
    Conditions,
    Profile,
    ProfileBounds,
    Reason,
    Usage,
    decide,
    profile_bounds,
)
from reference.jobs.budgets import Budgets

MB = 1 << 20
JOB = Candidate("q", "g", 2, 3)
BUDGETS = Budgets({"q": 10}, {"g": 6})
HEAVY = Profile(duration=30.0, peak_memory=500 * MB, samples=3)

# One situation per check that fails exactly that check and every later one.
FAILING = {
    Reason.GROUP_CONCURRENCY: Usage(group_running=2),
    Reason.QUEUE_BUDGET: Usage(queue_cost=8),
    Reason.GROUP_BUDGET: Usage(group_cost=4),
}


def conditions(**overrides: object) -> Conditions:
    base: dict[str, object] = {
        "system_available": 100 * MB,  # peak + margin does not fit
        "system_source": "cgroup2",
        "worker_rss": 700 * MB,
        "worker_limit": 1200 * MB,  # the peak fits an idle worker, not this one
        "time_left": 10.0,
        "lease": 60.0,
    }
    base.update(overrides)
    return Conditions(**base)  # type: ignore[arg-type]


def test_the_order_is_the_issues() -> None:
    assert [r.value for r in ORDER] == [
        "group_concurrency_limit",
        "queue_budget",
        "group_budget",
        "handler_profile",
        "system_memory",
        "worker_memory",
        "time_left",
    ]


@pytest.mark.parametrize("reason", list(FAILING))
def test_each_shared_check_is_reported_first_when_it_fails(reason: Reason) -> None:
    usage = Usage(
        group_running=max(u.group_running for u in FAILING.values())
        if reason is Reason.GROUP_CONCURRENCY
        else 0,
        queue_cost=8 if ORDER.index(reason) <= 1 else 0,
        group_cost=4,
    )
    decision = decide(JOB, usage, BUDGETS, HEAVY, conditions())
    assert not decision.admitted and decision.reason is reason, decision


def test_process_checks_in_order() -> None:
    # every process-level check fails; removing the first failing one exposes the next
    steps: list[tuple[Reason, dict[str, object]]] = [
        (Reason.HANDLER_PROFILE, {"worker_limit": 400 * MB}),
        (Reason.SYSTEM_MEMORY, {}),
        (Reason.WORKER_MEMORY, {"system_available": None}),
        (Reason.TIME_LEFT, {"system_available": None, "worker_rss": 0}),
    ]
    for reason, overrides in steps:
        decision = decide(JOB, Usage(), BUDGETS, HEAVY, conditions(**overrides))
        assert decision.reason is reason, (reason, decision)
    fine = conditions(system_available=None, worker_rss=0, time_left=None)
    assert decide(JOB, Usage(), BUDGETS, HEAVY, fine).admitted


def test_handler_profile_also_denies_a_handler_outlasting_the_lease() -> None:
    decision = decide(JOB, Usage(), BUDGETS, HEAVY, conditions(lease=20.0))
    assert decision.reason is Reason.HANDLER_PROFILE and "lease" in decision.detail


def test_disabled_admission_skips_process_checks_but_not_budgets() -> None:
    off = conditions(enabled=False)
    assert decide(JOB, Usage(), BUDGETS, HEAVY, off).admitted
    assert decide(JOB, Usage(queue_cost=8), BUDGETS, HEAVY, off).reason is Reason.QUEUE_BUDGET


def test_unknown_handler_and_no_system_reading_still_admit_within_budgets() -> None:
    assert decide(JOB, Usage(), BUDGETS, None, conditions()).admitted
    no_reading = conditions(system_available=None, worker_rss=0, time_left=None)
    assert decide(JOB, Usage(), BUDGETS, HEAVY, no_reading).admitted


def test_denials_carry_the_retry_after() -> None:
    decision = decide(JOB, Usage(group_running=2), BUDGETS, None, Conditions(retry_after=7.5))
    assert decision.retry_after == 7.5 and "runs 2 of its limit 2" in decision.detail


# ----------------------------------------------------------------------------- memory sources


def _fake(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


MEMINFO = "MemTotal: 8000000 kB\nMemAvailable:    2000 kB\n"


@pytest.mark.parametrize(
    ("group", "limit", "expected"),
    [
        ("app", "1000000", sysmem.Snapshot(600000, "cgroup2")),
        ("", "max", sysmem.Snapshot(2000 * 1024, "meminfo")),
    ],
    ids=["cgroup2-first", "cgroup2-without-a-limit-falls-back-to-meminfo"],
)
def test_cgroup2(tmp_path: Path, group: str, limit: str, expected: sysmem.Snapshot) -> None:
    cgroup = Path("sys/fs/cgroup", group)
    files = {
        "proc/self/cgroup": f"0::/{group}\n",
        f"{cgroup}/memory.max": f"{limit}\n",
        f"{cgroup}/memory.current": "400000\n",
        "proc/meminfo": MEMINFO,
    }
    assert sysmem.snapshot(_fake(tmp_path, files)) == expected


def test_cgroup1_then_unlimited_v1(tmp_path: Path) -> None:
    files = {
        "sys/fs/cgroup/memory/memory.limit_in_bytes": "5000\n",
        "sys/fs/cgroup/memory/memory.usage_in_bytes": "1000\n",
    }
    assert sysmem.snapshot(_fake(tmp_path / "a", files)) == sysmem.Snapshot(4000, "cgroup1")
    files["sys/fs/cgroup/memory/memory.limit_in_bytes"] = str(9223372036854771712)
    files["proc/meminfo"] = MEMINFO
    assert sysmem.snapshot(_fake(tmp_path / "b", files)) == sysmem.Snapshot(2048000, "meminfo")


def test_no_trustworthy_reading(tmp_path: Path) -> None:
    assert sysmem.snapshot(tmp_path) is None
    root = _fake(tmp_path, {"proc/meminfo": "MemTotal: 1 kB\nMemAvailable: lots\n"})
    assert sysmem.snapshot(root) is None


def _within(bounds: ProfileBounds, profile: Profile | None) -> bool:
    """Admitted by checks 5-8 as the claim function reads ``bounds``."""
    if not bounds.check or profile is None:
        return True
    peak_ok = bounds.max_peak is None or profile.peak_memory <= bounds.max_peak
    return peak_ok and (bounds.max_duration is None or profile.duration <= bounds.max_duration)


def _disagreements(bounds_of: Callable[[Conditions], ProfileBounds], seed: int = 7) -> int:
    rng = random.Random(seed)
    found = 0
    for _ in range(4000):
        pick = rng.choice
        conditions = Conditions(
            enabled=rng.random() < 0.85,
            system_available=pick([None, 50 * MB, 200 * MB, 1 << 33]),
            worker_rss=pick([None, 30 * MB, 150 * MB]),
            worker_limit=pick([None, 100 * MB, 300 * MB]),
            memory_margin=pick([0, 64 * MB]),
            time_left=pick([None, 1.0, 30.0]),
            lease=pick([10.0, 300.0]),
        )
        peak = pick([0, 10 * MB, 100 * MB, 250 * MB])
        profile = pick([None, Profile(pick([0.5, 5.0, 20.0, 400.0]), peak, 1)])
        admitted = decide(Candidate("q", None, None, 1), Usage(), Budgets(), profile, conditions).admitted
        found += admitted != _within(bounds_of(conditions), profile)
    return found


def test_the_profile_bounds_admit_exactly_what_decide_admits() -> None:
    assert _disagreements(profile_bounds) == 0


def test_bounds_that_forget_the_workers_resident_memory_are_caught() -> None:
    def forgetful(conditions: Conditions) -> ProfileBounds:
        return profile_bounds(dataclasses.replace(conditions, worker_rss=None))

    assert _disagreements(forgetful) > 0
