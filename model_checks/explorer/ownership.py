"""Which process owns a state, when several share a search: a choice made for speed only.

Any function of the state gives a correct search, as long as every process
uses the same one. Hashing the whole state balances the processes but sends
about half of all successors to another process, and sending a state (encode,
write, read, decode, look up) costs a good part of what generating it does.
Most steps change one or two variables, so hashing only the variables that
steps rarely change keeps most successors with the process that found them.

The variables are picked on a sample, the first few thousand states of a
breadth-first search: the least often changed first, adding more until the
sample's states split evenly enough between the processes. A state that is not
a record (``NamedTuple``), or a sample that gives no good split, falls back to
the whole state.

The split is judged on the sample only: measured on the whole Work Lane state
space it gave one process 33% to 60% of the states depending on the hash seed
(against 50% when hashing whole states), with 7% to 25% of the successors
crossing to the other process (against 50%). A better split would need a
sample that looks deeper than the first layers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from model_checks.explorer.dispatch import Dispatch
from spec.language import Emitted, Instance

SAMPLE_STATES = 3000
MAX_SHARE = 0.56  # the largest share of the sample one process may own
MIN_VALUES = 32  # distinct projected values needed before trusting the split


def owner_fields(
    inst: Instance, canon: Callable[[Any, Any], Any] | None, size: int, mix: Callable[[Any], int] = hash
) -> tuple[int, ...] | None:
    """The fields whose hash decides which of ``size`` processes owns a state (``None``: all of it).

    ``mix``: the hash the processes will own states by (Ray's workers: a digest, ``ray/fingerprint.py``),
    so that the split is judged as it will be made, and made alike on every run."""
    if size < 2 or not all(_is_record(s) for s in inst.initial_states()):
        return None
    return choose(sample(inst, canon), size, mix)


def _is_record(state: Any) -> bool:
    return isinstance(state, tuple) and hasattr(type(state), "_fields")


def sample(inst: Instance, canon: Callable[[Any, Any], Any] | None, limit: int = SAMPLE_STATES) -> list[Any]:
    """Up to ``limit`` (canonical) states with their successors: ``[(state, [successor, ...]), ...]``."""
    c = inst.constants
    dispatch = Dispatch(inst)
    seen: set[Any] = set()
    order: list[Any] = []
    for s0 in inst.initial_states():
        key = canon(c, s0) if canon else s0
        if key not in seen:
            seen.add(key)
            order.append(key)
    pairs: list[Any] = []
    for state in order:
        if len(pairs) >= limit:
            break
        successors = []
        for _, fn, args, _ in dispatch.calls(state):
            result = fn(c, state, *args)
            if result is None:
                continue
            nxt = result.state if type(result) is Emitted else result
            key = canon(c, nxt) if canon else nxt
            successors.append(key)
            if key not in seen and len(order) < 4 * limit:
                seen.add(key)
                order.append(key)
        pairs.append((state, successors))
    return pairs


def choose(pairs: list[Any], size: int, mix: Callable[[Any], int] = hash) -> tuple[int, ...] | None:
    """The fields whose hash decides the owner, or ``None`` for the whole state."""
    if size < 2 or not pairs:
        return None
    first = pairs[0][0]
    if not _is_record(first):
        return None
    n = len(first)
    changes = [0] * n
    for state, successors in pairs:
        for nxt in successors:
            for i in range(n):
                if state[i] is not nxt[i] and state[i] != nxt[i]:
                    changes[i] += 1
    states = [state for state, _ in pairs]
    chosen: list[int] = []
    for i in sorted(range(n), key=lambda i: changes[i]):
        chosen.append(i)
        project = itemgetter(*chosen)
        values = Counter(project(s) for s in states)
        if len(values) < MIN_VALUES:
            continue
        owners = {v: mix(v) % size for v in values}
        shares = Counter(owners[v] for v in values.elements())
        if max(shares.values()) <= MAX_SHARE * len(states):
            return tuple(sorted(chosen))
    return None
