"""What ``lanecheck explore`` adds to the harness's words when a check cannot go on: a replay
that diverged, a re-run that enabled other threads."""

from __future__ import annotations

from typing import Final

# Why a replay diverges, when nothing says which: not only the hash seed (review 13's C3: a class
# counter an earlier execution had moved, ``ThreadPoolExecutor``'s, was blamed on the seed).
DIVERGED: Final = (
    "the failing execution may have depended on what the search's earlier executions left behind "
    "(a counter, a cache, a module's global), on objects' addresses (id(), the default hash(), a "
    "repr with an address), or on the str/bytes hash seed: a schedule found under another seed "
    "replays only under it, so give the report's --hash-seed (this run's PYTHONHASHSEED=%s)"
)
# The first words of the scheduler's error when a re-run of a schedule enables other threads, and
# what it leaves out (review 13's N1: jobs sharded by ``hash(job)``, an address, differ from one
# execution to the next, and the message spoke only of time, randomness and threads).
_NOT_DETERMINISTIC: Final = "the test is not deterministic"
_ADDRESSES_HINT: Final = (
    "; or does it decide by objects' addresses (id(), the default hash() of an object without "
    "__hash__, a repr with an address: a set or dict of such objects, sharding or ordering by "
    "them)? Each execution makes its objects at other addresses: key such choices by a value of "
    "the object's own (a number, a name) instead"
)


def not_deterministic(why: str) -> str:
    """A usage error's words, the likely cause the scheduler leaves out added to "not deterministic"."""
    return why + _ADDRESSES_HINT if why.startswith(_NOT_DETERMINISTIC) else why
