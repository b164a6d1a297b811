"""The rules of the event-pool trace format (docs/event-pool.md, "The trace"), by number."""

from __future__ import annotations

RULES: dict[int, str] = {
    1: "threads: wait, wake, take, run and done come only from the pool threads t0 .. t{threads-1}; a "
    "post's `to` names one; a pool thread posts and signals only inside a callback and never logs cancel "
    "or stop events",
    2: "a pool thread follows wait wake (take (run done)?)*: a wake is followed by a take, a take of a work "
    "by its run, a run by its done, a done by another take (the `while`), a take null by a wait; after "
    "wake stop it logs nothing",
    3: "posts: accepted posts are numbered 0, 1, 2, ... in order; none is accepted after stop_begin",
    4: "idle first: a post picks (`to`) only an idle thread, and picks none only when no thread is idle "
    "(every thread starts idle; take null makes it idle; being picked or taking a work makes it busy)",
    5: "signal: a thread whose post picked t signals t as its next event of its own, and signals nobody "
    "unpicked",
    6: "one wake per signal: a thread's event (auto-reset) wakes it (wake event) at most as many times as "
    "it was signalled, less the SetEvents made (before their poster's next event) on its event while it "
    "was surely still set (they coalesce); a wait begun with its own event set returns event, not timeout "
    "nor stop (its event is the lowest handle)",
    7: "the work index: a take hands out the oldest listed work (never a skip, a repeat or a work not "
    "posted); take null only on an empty list; cancel and discard name listed works only, each once",
    8: "stop: one stop_begin; wake stop only after it, once every accepted work settled (posted = done + "
    "cancelled + discarded: stop sets the stop event after the last settle); discard only in "
    "stop(discard): when stop_begin found works listed, its stopper logs one discard of exactly the "
    "whole list, in list order, and nothing logged under the list lock (take, cancel, a post not "
    "refused for its argument) nor by the stopper comes between; none when the list was empty; "
    "stop_end matches its stop_begin (its mode, logged by its thread: a call returns where it was made), "
    "comes after every pool thread exited, and is ok (a failed pool "
    "is no behaviour of the spec)",
    9: "a complete trace (stop_end, or --complete): no lost wakeup — it never ends with a pool thread "
    "asleep while work is in the list — and every accepted work ran to done or was cancelled or discarded",
    10: "a trace that ends before stop_end (and without --complete) is judged as a prefix",
}

PREFIX_RULE = 10
