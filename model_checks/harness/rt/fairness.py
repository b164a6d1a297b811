"""Fairness at sleeps: CHESS's rule for threads that yield (Musuvathi & Qadeer, "Fair stateless
model checking", PLDI 2008), with a sleep as the yield and applied to a thread that sleeps again
(docs/harness.md, "Fairness at sleeps").

A thread that sleeps a second time while a thread able to run at its previous sleep has not run
since is spinning: it gives way to the threads able to run now, and is left out of the enabled
set while one of them is able to run and has not run a step since. Without the rule a correct
spin-wait (``while not ready(): time.sleep(...)``) runs, in the schedule that never switches away
from it, until ``max_steps`` and is reported as a livelock, a schedule no real interpreter runs.
A thread's first sleep holds nothing back, so a program that wrongly takes a sleep for
synchronisation (``time.sleep(0.01)`` and then assume the other thread went first) is still
shown the schedule where it did not. Compiled with the rest of the core (``CORE``)."""

from __future__ import annotations

Action = tuple[int, int]  # (thread, alternative), as the scheduler's


class Fairness:
    """Who gives way to whom in one execution."""

    def __init__(self) -> None:
        self.waits_for: dict[int, set[int]] = {}  # a spinning sleeper -> who it still gives way to
        # a sleeper -> the threads able to run at its last sleep that have not run since
        self.owed: dict[int, set[int]] = {}
        self.cut = False  # was a sleeper held back (a schedule the rule excludes, not run)

    def slept(self, tid: int, able: set[int]) -> None:
        """``tid`` ran a sleep while the threads ``able`` (not ``tid``) could run."""
        spinning = bool(self.owed.get(tid))
        if able:
            self.owed[tid] = set(able)
        else:
            self.owed.pop(tid, None)
        if spinning and able:
            self.waits_for[tid] = able
        else:
            self.waits_for.pop(tid, None)

    def ran(self, tid: int) -> None:
        """``tid`` runs a step: no sleeper gives way to it, or owes it a turn, any longer."""
        for table in (self.waits_for, self.owed):
            for sleeper in list(table):
                others = table[sleeper]
                others.discard(tid)
                if not others:
                    del table[sleeper]

    def allowed(self, out: list[Action]) -> list[Action]:
        """``out`` without the actions of a sleeper that still gives way to a thread in it. One
        thread at least is never held back (a thread that holds a sleeper back has not run since
        that sleep, so any sleep of its own came before it): the rule never makes a deadlock."""
        tids = {a[0] for a in out}
        held = {t for t, others in self.waits_for.items() if t in tids and not others.isdisjoint(tids)}
        if not held:
            return out
        kept = [a for a in out if a[0] not in held]
        if not kept:
            return out
        self.cut = True
        return kept

    def state(self) -> list[tuple[int, list[int], list[int]]]:
        """The part of the execution's state the rule adds (for a state fingerprint)."""
        empty: set[int] = set()
        return [
            (t, sorted(self.waits_for.get(t, empty)), sorted(self.owed.get(t, empty)))
            for t in sorted(set(self.waits_for) | set(self.owed))
        ]
