"""Valid work-stealing traces of any length: a random sequential schedule of the model.

One thread at a time acts (so log order is the linearization order by construction): the
caller ``main`` submits roots and joins finished tasks; worker ``w<i>`` runs the task it
took, forks subtasks onto its deque (growing the buffer when full and waking a parked
worker), finishes tasks (nested: it helps while its task waits), or looks for work — its
own bottom, the injector, a random victim's top — and parks when nothing is visible.
Failed steals (``abort``) and empty looks are logged too. After about ``n`` events a stop
(drain or discard) ends the run with ``stop_end`` ok, so every trace is complete.

For the benchmark (``trace_bench``), the tests (every trace must be allowed) and the fuzz
tests (single-event corruptions of these traces).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from typing import Any

Event = dict[str, Any]


def header(workers: int, capacity: int, pool: str = "stealing") -> Event:
    config = {"workers": workers, "capacity": capacity, "pool": pool}
    return {"trace": "lanecheck", "version": 1, "design": "work-stealing", "config": config}


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
    stacks: list[list[list[Any]]] = [[] for _ in range(workers)]  # [task, subtasks left, depth]
    parked: list[int] = []
    finished: deque[str] = deque(maxlen=64)  # recently done tasks, for join events
    seq = 0
    made = 0
    open_tasks = 0  # introduced, not yet done or discarded
    stopping = False

    def ev(thread: str, event: str, **fields: Any) -> Event:
        nonlocal seq
        seq += 1
        return {"seq": seq, "thread": thread, "event": event, **fields}

    while True:
        if not stopping and seq >= n:
            stopping = True
            yield ev("main", "stop_begin", mode=stop)
            if stop == "discard":
                dropped = list(injector) + [x for dq in deques for x in dq]
                dropped += [x for x in held if x is not None]
                injector.clear()
                for dq in deques:
                    dq.clear()
                held = [None] * workers
                open_tasks -= len(dropped)
                for stack in stacks:  # running tasks finish without forking more
                    for frame in stack:
                        frame[1] = 0
                yield ev("main", "discard", tasks=dropped)
        if stopping and open_tasks == 0:
            yield ev("main", "stop_end", mode=stop, result="ok")
            return
        if rand() < (0.02 if stopping else 0.12):
            # The caller: a submit (refused once stop began), sometimes a join of a finished task.
            if finished and rand() < 0.2:
                yield ev("main", "join", task=finished[0])
            elif stopping:
                yield ev("main", "submit", task=f"late{seq}", result="invalid_state")
            elif open_tasks < backlog:  # a bounded backlog: the run can end soon after the stop
                made += 1
                task = f"t{made}"
                injector.append(task)
                open_tasks += 1
                yield ev("main", "submit", task=task, result="ok")
                if parked:
                    yield ev("main", "unpark", worker=parked.pop(rng.randrange(len(parked))))
            continue
        w = rng.randrange(workers)
        if w in parked:
            continue
        me = names[w]
        stack = stacks[w]
        mine = held[w]
        if mine is not None:
            held[w] = None
            kids = 2 if not stopping and rand() < fork else 0  # after the stop, no new forks: it ends
            level = stack[-1][2] + 1 if stack else 0
            stack.append([mine, kids if level < depth else 0, level])
            yield ev(me, "run", worker=w, task=mine)
            continue
        if stack and stack[-1][1] > 0:
            frame = stack[-1]
            frame[1] -= 1
            made += 1
            task = f"t{made}"
            dq = deques[w]
            if len(dq) >= cap[w]:
                cap[w] *= 2
                yield ev(me, "resize", worker=w, capacity=cap[w])
            dq.append(task)
            open_tasks += 1
            yield ev(me, "push", worker=w, task=task, size=len(dq))
            if parked:
                yield ev(me, "unpark", worker=parked.pop(rng.randrange(len(parked))))
            continue
        if stack and rand() < 0.6:
            task = stack.pop()[0]
            open_tasks -= 1
            finished.append(task)
            yield ev(me, "done", worker=w, task=task, outcome="raised" if rand() < 0.03 else "ok")
            if rand() < 0.1:
                yield ev(me, "join", task=task)
            continue
        # Look for work: own bottom, the injector, one victim's top.
        dq = deques[w]
        if dq:
            task = dq.pop()
            held[w] = task
            yield ev(me, "take", worker=w, task=task, result="ok")
            continue
        if rand() < 0.3:
            yield ev(me, "take", worker=w, task=None, result="empty")
        if injector:
            held[w] = injector.popleft()
            yield ev(me, "steal", worker=w, victim="injector", task=held[w], result="ok")
            continue
        if workers > 1:
            v = rng.randrange(workers - 1)
            v += v >= w  # any other worker
            other = deques[v]
            if other and rand() < 0.1:
                yield ev(me, "steal", worker=w, victim=v, task=None, result="abort")
            elif other:
                held[w] = other.popleft()
                yield ev(me, "steal", worker=w, victim=v, task=held[w], result="ok")
                continue
            else:
                yield ev(me, "steal", worker=w, victim=v, task=None, result="empty")
        if stack:
            continue  # helping: its task is still running, it keeps looking (or finishes it)
        if not injector and not any(deques):
            parked.append(w)
            yield ev(me, "park", worker=w)
