"""Valid work-stealing traces of any length: a random sequential schedule of the reference pool.

One thread at a time acts (so log order is the linearization order by construction), and every
thread logs what the traced reference (reference/work_stealing_base.py) logs: the caller ``main``
submits roots (waking a parked worker) and joins finished tasks; worker ``w<i>`` runs the task it
holds, whose body pushes its subtasks (growing the buffer when full, waking a parked worker), then
either completes or joins each subtask in turn — helping (looking for work, running it nested)
while the one it waits for is not done, parking when nothing is visible, woken by that subtask's
completion — and completes. A worker looks for work as the reference does: its own bottom (``take``,
logged empty too), the injector (logged empty too), one random victim's top (another thief
sometimes wins the same task first: an ``abort``); it parks when no queue holds a task. After about
``n`` events a stop (drain or discard) ends the run with ``stop_end`` ok, so every trace is complete:
Stop(discard) discards the injector at once, and workers discard the tasks they take afterwards.

So each trace is a behaviour of ``spec/work_stealing_open.py`` as well as of the fast model: the
benchmark (``trace_bench``), the tests (both engines must allow every trace) and the fuzz tests
(single-event corruptions of these traces) use it.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.numbering import Numbering

Event = dict[str, Any]
STUCK = 10_000  # turns in a row without an event: a bug of the generator, never a valid run


def header(workers: int, capacity: int, pool: str = "stealing") -> Event:
    config = {"workers": workers, "capacity": capacity, "pool": pool}
    return {"trace": "lanecheck", "version": 1, "design": "work-stealing", "config": config}


@dataclass
class Frame:
    """A running task: the subtasks it still spawns, and those it joins, in order."""

    task: str
    kids: int  # subtasks still to spawn
    depth: int
    joins: bool  # joins its subtasks (else completes after spawning them)
    spawned: list[str] = field(default_factory=list)


def events(
    n: int,
    *,
    workers: int = 4,
    capacity: int = 4,
    seed: int = 0,
    fork: float = 0.45,
    depth: int = 12,
    stop: str = "drain",
    backlog: int = 64,
) -> Iterator[Event]:
    """About ``n`` events of a valid behaviour, then ``stop`` ("drain" or "discard") to the end.

    The caller submits only while fewer than ``backlog`` tasks are open, so the drain is short."""
    rng = random.Random(seed)
    rand = rng.random
    names = [f"w{i}" for i in range(workers)]
    injector: deque[str] = deque()
    deques: list[deque[str]] = [deque() for _ in range(workers)]
    cap = [capacity] * workers
    held: list[str | None] = [None] * workers
    stacks: list[list[Frame]] = [[] for _ in range(workers)]
    parked: list[int] = []
    settled: set[str] = set()
    finished: deque[str] = deque(maxlen=64)  # recently settled tasks, for the caller's joins
    numbering = Numbering()
    made = 0
    open_tasks = 0  # introduced, not yet done or discarded
    stopping = False
    discarding = False
    idle_turns = 0

    ev = numbering.event

    def awaited(w: int) -> str | None:
        """The subtask w's innermost task waits for in its join, while it is not settled."""
        stack = stacks[w]
        if not stack or stack[-1].kids or not stack[-1].joins or not stack[-1].spawned:
            return None
        kid = stack[-1].spawned[0]
        return None if kid in settled else kid

    def settle(task: str, thread: str) -> Iterator[Event]:
        """``task`` is done or discarded: the parked worker whose join waits for it is woken."""
        nonlocal open_tasks
        joiners = [u for u in parked if awaited(u) == task]  # before it counts as settled
        open_tasks -= 1
        settled.add(task)
        finished.append(task)
        for u in joiners[:1]:
            parked.remove(u)
            yield ev(thread, "unpark", worker=u)

    def wake_one(thread: str) -> Iterator[Event]:
        if parked:
            yield ev(thread, "unpark", worker=parked.pop(rng.randrange(len(parked))))

    def looks(u: int) -> bool:
        """u is between tasks (or helping in a join) with nothing of its own: its next act is a look."""
        return (
            u not in parked
            and held[u] is None
            and not deques[u]
            and (not stacks[u] or awaited(u) is not None)
        )

    def push(w: int, frame: Frame) -> Iterator[Event]:
        nonlocal made, open_tasks
        frame.kids -= 1
        made += 1
        task = f"t{made}"
        dq = deques[w]
        if len(dq) >= cap[w]:
            cap[w] *= 2
            yield ev(names[w], "resize", worker=w, capacity=cap[w])
        dq.append(task)
        frame.spawned.append(task)
        open_tasks += 1
        yield ev(names[w], "push", worker=w, task=task, size=len(dq))
        yield from wake_one(names[w])

    def look(w: int) -> Iterator[Event]:
        """Own bottom, the injector, one victim; park when no queue holds a task."""
        me = names[w]
        dq = deques[w]
        if dq:
            held[w] = dq.pop()
            yield ev(me, "take", worker=w, task=held[w], result="ok")
            return
        yield ev(me, "take", worker=w, task=None, result="empty")
        if injector:
            held[w] = injector.popleft()
            yield ev(me, "steal", worker=w, victim="injector", task=held[w], result="ok")
            return
        yield ev(me, "steal", worker=w, victim="injector", task=None, result="empty")
        if workers > 1:
            v = rng.randrange(workers - 1)
            v += v >= w  # any other worker
            other = deques[v]
            rivals = [u for u in range(workers) if u not in (v, w) and looks(u)]
            if other and rivals and rand() < 0.25:
                # Another thief steals the task w read the top of: w's CAS fails.
                u = rng.choice(rivals)
                yield ev(names[u], "take", worker=u, task=None, result="empty")
                yield ev(names[u], "steal", worker=u, victim="injector", task=None, result="empty")
                held[u] = other.popleft()
                yield ev(names[u], "steal", worker=u, victim=v, task=held[u], result="ok")
                yield ev(me, "steal", worker=w, victim=v, task=None, result="abort")
            if other:
                held[w] = other.popleft()
                yield ev(me, "steal", worker=w, victim=v, task=held[w], result="ok")
                return
            yield ev(me, "steal", worker=w, victim=v, task=None, result="empty")
        if not injector and not any(deques):
            parked.append(w)
            yield ev(me, "park", worker=w)

    def worker_turn(w: int) -> Iterator[Event]:
        me = names[w]
        stack = stacks[w]
        mine = held[w]
        if mine is not None:
            held[w] = None
            if discarding:  # Stop(discard) began: a task taken now is discarded, not run
                yield ev(me, "discard", tasks=[mine])
                yield from settle(mine, me)
                return
            kids = 2 if not stopping and rand() < fork else 0  # after the stop, no new forks: it ends
            level = stack[-1].depth + 1 if stack else 0
            stack.append(Frame(mine, kids if level < depth else 0, level, rand() < 0.5))
            yield ev(me, "run", worker=w, task=mine)
            return
        if not stack:
            yield from look(w)
            return
        frame = stack[-1]
        if frame.kids:
            yield from push(w, frame)
            return
        if frame.joins and frame.spawned:
            kid = frame.spawned[0]
            if kid in settled:  # its join returns
                frame.spawned.pop(0)
                yield ev(me, "join", task=kid)
            else:
                yield from look(w)  # helping while the subtask is not done
            return
        stack.pop()
        yield ev(me, "done", worker=w, task=frame.task, outcome="raised" if rand() < 0.03 else "ok")
        yield from settle(frame.task, me)
        if rand() < 0.1:
            yield ev(me, "join", task=frame.task)

    while True:
        if not stopping and numbering.seq >= n:
            stopping = True
            yield ev("main", "stop_begin", mode=stop)
            if stop == "discard":
                discarding = True
                dropped = list(injector)
                injector.clear()
                if dropped:
                    yield ev("main", "discard", tasks=dropped)
                for task in dropped:
                    yield from settle(task, "main")
                for stack in stacks:  # running tasks finish without spawning more
                    for frame in stack:
                        frame.kids = 0
        if stopping and open_tasks == 0:
            for u in sorted(parked):  # Stop wakes every parked worker, which exits
                yield ev("main", "unpark", worker=u)
            yield ev("main", "stop_end", mode=stop, result="ok")
            return
        before = numbering.seq
        if rand() < (0.02 if stopping else 0.12):
            # The caller: a submit (refused once stop began), sometimes a join of a finished task.
            if finished and rand() < 0.2:
                yield ev("main", "join", task=finished[0])
            elif stopping:
                yield ev("main", "submit", task=f"late{numbering.seq}", result="invalid_state")
            elif open_tasks < backlog:  # a bounded backlog: the run can end soon after the stop
                made += 1
                task = f"t{made}"
                injector.append(task)
                open_tasks += 1
                yield ev("main", "submit", task=task, result="ok")
                yield from wake_one("main")
        else:
            w = rng.randrange(workers)
            if w not in parked:
                yield from worker_turn(w)
        idle_turns = idle_turns + 1 if numbering.seq == before else 0
        if idle_turns > STUCK:
            raise RuntimeError(f"the trace generator is stuck at seq {numbering.seq} (seed {seed})")
