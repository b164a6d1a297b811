"""What an observed event needs of the deferred steps (``search.py``'s module docstring): which
processes' deferred steps the search takes before matching it, worked out by
``deferral.needed`` and memoised by what decides it (the event, the held states' pcs and units).
``TraceSearch`` is this with the states it holds; split from ``search.py`` and compiled with it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from model_checks.conformance.deferral import (
    Chain,
    Signature,
    Taking,
    event_steps,
    held_renamed,
    leading_to,
    may_log,
    needed,
    needed_at_most,
    relevant_chains,
    units_renamed,
)
from model_checks.conformance.step_index import State, StepIndex, bounded, mypyc_attr

# ``_plan``'s memo holds this many times as many entries as the others (``CACHE_LIMIT``): its
# entries are small (a plan per event kind and what the held states' chains are), and on one
# design's 20k-event bench trace they take about 1,600 values, so at 256 it was emptied every few
# hundred events and ``needed`` ran again for two events in three (the measurements:
# docs/conformance.md, "Session 29").
PLAN_CACHE_FACTOR = 16
# Entries of ``_plan``'s first memo (state by state, ``held_renamed``): a miss costs one
# ``relevant_chains`` and, in the second memo, mostly a hit; at 256 entries it held the most of
# the Schedule Gate's memory that grew with its trace, at 64 its peak still came later on a
# longer trace (docs/conformance.md, "Session 42").
HELD_PLAN_LIMIT = 16

# What an event needs of the deferred steps: the processes whose steps are taken first, with (or
# None: every one) the actions each may take, and the processes as a set.
Plan = tuple[tuple[Hashable, ...], Taking | None, frozenset[Hashable]]


@mypyc_attr(allow_interpreted_subclasses=True)
class EventPlanner(StepIndex):
    """The deferred steps each event needs, for the states ``live`` holds (``TraceSearch``'s)."""

    live: set[State]
    optional: frozenset[str]
    emits: dict[str, dict[str, Any]]
    # the pcs each logged action fires from (its ``at``): which deferred steps can lead there
    _event_at: dict[str, frozenset[Hashable] | None]
    plan_cache_limit: int
    # per set of deferred actions: the actions one of them does not move right past
    _blocked_of: dict[frozenset[str], frozenset[str]]

    def _forget_plans(self) -> None:
        """Empty the memos: the processes or the constants changed."""
        # ``needed`` by (kind, processes, what decides it of the states held and the event).
        self._relevant: dict[tuple[Any, ...], Plan] = {}
        # ``needed`` by what it reads of the states held, state by state (``held_renamed``): the
        # first memo, cheap to key, bounded at ``HELD_PLAN_LIMIT``; on a miss, ``_relevant``, keyed by
        # the chains ``needed`` can read (``relevant_chains``), which recur far more (on the
        # Schedule Gate's bench trace 20 keys where state by state met 500 and growing).
        self._held: dict[tuple[Any, ...], Plan] = {}
        self._held_signatures: dict[Signature, Signature] = {}
        # The chains in ``_relevant``'s keys, and its plans, each kept once: equal ones built
        # apart are one object, so an entry is a few pointers (``units_renamed``).
        self._signatures: dict[Chain, Chain] = {}
        self._plans: dict[tuple[Any, ...], Plan] = {}
        # ``needed``'s memo of the steps of a chain that may lead to its conflicting ones.
        self._prefixes: dict[tuple[frozenset[str], frozenset[str], frozenset[str]], frozenset[str]] = {}
        # Per event (kind, its one process, ruled out): that process's deferred actions after
        # which it may reach the pcs the event's actions fire from (``leading_to``).
        self._leads: dict[
            tuple[str, tuple[Hashable, ...], frozenset[str]], dict[Hashable, frozenset[str]]
        ] = {}
        # ``needed_at_most`` by event: (kind, processes, ruled out) -> (at most, at least, the plan
        # when they are equal).
        self._bounds: dict[
            tuple[str, tuple[Hashable, ...], frozenset[str]],
            tuple[frozenset[Hashable], frozenset[Hashable], Plan],
        ] = {}

    def _may_log(self, name: str, ev: Mapping[str, Any]) -> bool:
        """Whether the logged action ``name`` could log ``ev`` by the fields it always emits."""
        return may_log(self.emits, self.optional, name, ev)

    def _taking(self, *event: Any) -> frozenset[Hashable]:
        """The processes whose deferred steps this event needs (``_plan``'s; tests read it)."""
        return self._plan(*event)[2]

    def _plan(
        self,
        kind: str,
        procs: tuple[Hashable, ...],
        at: Hashable = None,
        ruled_out: frozenset[str] = frozenset(),
    ) -> Plan:
        """The deferred steps this event needs (``deferral.needed``), memoised by what decides it:
        the event, the held states' pcs and their units."""
        bounds = self._bounds.get((kind, procs, ruled_out))
        if bounds is None:
            most, least = needed_at_most(
                procs,
                ruled_out,
                self._labelled.get(kind, {}),
                deferred=self.deferred,
                deferred_names=self._deferred_names,
                hidden_names=self._hidden_names,
            )
            # The event's own processes only: every step of theirs, as the closure has them.
            bounds = (most, least, (tuple(least), None, least))
            bounded(self._bounds, self.cache_limit)[(kind, procs, ruled_out)] = bounds
        if bounds[0] == bounds[1]:
            return bounds[2]
        live = self.live
        memo_key: tuple[Any, ...]
        first_key: tuple[Any, ...] | None = None
        held: list[tuple[Chain, ...]] | None = None
        if self.pc_parts:
            # Only what ``needed`` reads of the states (each deferring process that can start,
            # with what it can take from its pc and its unit): far more events then find their
            # answer in the memo (docs/conformance.md, "Session 21").
            held = [self._start_chains(s) for s in live]
            signatures = bounded(self._held_signatures, HELD_PLAN_LIMIT)
            first_key = (kind, procs, held_renamed(held, at, signatures), at is None, ruled_out)
            found = self._held.get(first_key)
            if found is not None:
                return found
            per = self._labelled.get(kind, {})
            first = event_steps(procs, at, ruled_out, per, self.unit is not None, self._hidden_names)
            tables = (self.deferred, self._deferred_names, self._blocked_of)
            chains = relevant_chains(held, procs, first, tables)
            interned = bounded(self._signatures, self.plan_cache_limit)
            memo_key = (kind, procs, units_renamed(chains, at, interned), at is None, ruled_out)
        else:
            keys = frozenset([self._key_of(s) for s in live])
            unit = self.unit
            # The units held join the memo's key: a ``pc_key`` is not trusted to determine them
            # (nothing checks that it does), and the pcs alone do not.
            units: frozenset[tuple[Hashable, ...]] = (
                frozenset([tuple([unit(s, q) for q in self._deferred_names]) for s in live])
                if unit is not None
                else frozenset()
            )
            memo_key = (kind, procs, keys, at, units, ruled_out)
        found = self._relevant.get(memo_key)
        if found is None:
            found = self._needed(kind, procs, at, ruled_out, held, memo_key)
        if first_key is not None:
            bounded(self._held, HELD_PLAN_LIMIT)[first_key] = found
        return found

    def _needed(
        self,
        kind: str,
        procs: tuple[Hashable, ...],
        at: Hashable,
        ruled_out: frozenset[str],
        held: list[tuple[Chain, ...]] | None,
        memo_key: tuple[Any, ...],
    ) -> Plan:
        """``deferral.needed`` for ``_plan``, remembered in ``_relevant`` under ``memo_key``."""
        live = self.live
        per = self._labelled.get(kind, {})
        taking = needed(
            held if held is not None else [self._chains(s) for s in live],
            procs,
            event_steps(procs, at, ruled_out, per, self.unit is not None, self._hidden_names),
            deferred=self.deferred,
            deferred_names=self._deferred_names,
            blocked_of=self._blocked_of,
            leading=self._leading(kind, procs, ruled_out),
            enabled_at=self.enabled_at,
            moves_to=self.moves_to,
            prefixes=self._prefixes,
        )
        # Each process's steps of the actions it may need only (with every one, nothing is
        # checked step by step).
        whole = all([names == self._deferred_names.get(p) for p, names in taking.items()])
        plan_key = (whole, tuple(taking.items()))
        found = self._plans.get(plan_key)
        if found is None:
            found = (tuple(taking), None if whole else taking, frozenset(taking))
            bounded(self._plans, self.cache_limit)[plan_key] = found
        bounded(self._relevant, self.plan_cache_limit)[memo_key] = found
        return found

    def _leading(
        self, kind: str, procs: tuple[Hashable, ...], ruled_out: frozenset[str]
    ) -> dict[Hashable, frozenset[str]]:
        """``needed``'s ``leading`` for this event: worked out once per kind, process and ruled out."""
        key = (kind, procs, ruled_out)
        found = self._leads.get(key)
        if found is None:
            found = {}
            if self.moves_to and self.local is not None and len(procs) == 1:
                per = self._labelled.get(kind, {})
                for p in procs:
                    mine = self._deferred_names.get(p)
                    if mine is None:
                        continue
                    targets = [
                        self._event_at.get(name) for name, _, _ in per.get(p, ()) if name not in ruled_out
                    ]
                    found[p] = frozenset(
                        leading_to(
                            set(mine), targets, mine, enabled_at=self.enabled_at, moves_to=self.moves_to
                        )
                    )
            bounded(self._leads, self.cache_limit)[key] = found
        return found
