"""Fairness at sleeps: CHESS's rule for threads that yield (Musuvathi & Qadeer, "Fair stateless
model checking", PLDI 2008), with a sleep as the yield (docs/harness.md, "Fairness at sleeps").

A thread that sleeps gives way to the threads able to run at that moment: it is left out of the
enabled set while one of them is able to run and has not run a step since. Without the rule a
correct spin-wait (``while not ready(): time.sleep(...)``) runs, in the schedule that never
switches away from it, until ``max_steps`` and is reported as a livelock, a schedule no real
interpreter runs. Compiled with the rest of the core (``CORE``)."""

from __future__ import annotations

Action = tuple[int, int]  # (thread, alternative), as the scheduler's


class Fairness:
    """Who gives way to whom in one execution."""

    def __init__(self) -> None:
        self.waits_for: dict[int, set[int]] = {}  # a sleeper -> the threads it still gives way to
        self.cut = False  # was a sleeper held back (a schedule the rule excludes, not run)

    def slept(self, tid: int, able: set[int]) -> None:
        """``tid`` ran a sleep while the threads ``able`` (not ``tid``) could run."""
        if able:
            self.waits_for[tid] = able
        else:
            self.waits_for.pop(tid, None)

    def ran(self, tid: int) -> None:
        """``tid`` runs a step: no sleeper gives way to it any longer."""
        waits_for = self.waits_for
        for sleeper in list(waits_for):
            others = waits_for[sleeper]
            others.discard(tid)
            if not others:
                del waits_for[sleeper]

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

    def state(self) -> list[tuple[int, list[int]]]:
        """The part of the execution's state the rule adds (for a state fingerprint)."""
        return sorted((t, sorted(others)) for t, others in self.waits_for.items())
