"""The vocabulary of lanecheck specifications: a small TLA+ in Python.

A specification is a ``Spec`` object that a design module fills in, in the
order of a TLA+ module:

* **constants** — a frozen dataclass of the model's parameters (``CONSTANTS``),
  with ``ASSUME``-style checks registered by ``@spec.assume``;
* **variables** — an immutable, hashable ``NamedTuple`` (``VARIABLES``); TLA
  functions such as ``status[lane]`` are ``Function`` values, and
  ``f.except_(k, v)`` is ``[f EXCEPT ![k] = v]``; ``@variables`` on it makes
  ``s._replace(x=e)`` (``x' = e``, the rest UNCHANGED) one plain call;
* ``@spec.init`` — the initial states (``Init``);
* ``@spec.action(Workers, event="take")`` — one guarded action per verb of the
  domain: ``\\E w \\in Workers : Take(w)``. The action returns ``None`` when its
  guard is false, the next state for an internal step, or ``emit(next, ...)``
  for a step that an implementation logs as an observable event;
* ``@spec.program_counter(Workers)`` and ``@spec.action(Workers, at="idle")`` —
  optional hints, the ``pc[w] = "idle"`` conjunct of a PlusCal label: the
  action is only enabled where its process's program counter is one of ``at``,
  so the explorer need not call it elsewhere. A hint never changes what a
  spec means (the guard must say the same); it only saves calls;
* ``@spec.invariant`` — state predicates that return ``None`` when they hold
  and a sentence saying what is wrong when they do not;
  ``@spec.invariant(reads=("queue", "ready"))`` also names the variables the
  predicate reads, a hint that lets the explorer reuse its verdict;
* ``spec.fairness(WF(Workers), ...)`` — weak fairness per process;
* ``spec.property(LeadsTo(...))`` / ``EventuallyAlways(...)`` — liveness;
* ``@spec.symmetry`` — a canonical representative under interchangeable
  processes; ``@spec.terminal`` — the states where the system is done (not
  deadlocked); ``@spec.constraint`` — a bound on the states explored.

Everything here is pure: no threads, no I/O, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, overload

# TLA functions (``status[lane]``), EXCEPT and sequences have a module of their own; they are part of this
# vocabulary, so they are offered here too.
from spec.function import Append as Append
from spec.function import Function as Function
from spec.function import Head as Head
from spec.function import Seq as Seq
from spec.function import Tail as Tail
from spec.function import replace_at as replace_at

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
C = TypeVar("C")  # the constants of a spec
S = TypeVar("S")  # the state (variables) of a spec

# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Emitted(Generic[S]):
    """The result of an action that an implementation logs: the next state and the event's fields."""

    state: S
    fields: Mapping[str, Any]


def emit(state: S, **fields: Any) -> Emitted[S]:
    """Label a step with the fields of its observable event (the event's name is the action's)."""
    return Emitted(state, fields)


def variables(cls: type[S]) -> type[S]:
    """``VARIABLES``: a spec's state, a ``NamedTuple`` of its variables, where ``s._replace(x=e)``
    is a step's ``x' = e`` with every other variable UNCHANGED.

    Its ``_replace`` becomes one plain call with a keyword per variable: the ``collections`` one
    makes a dict of the changes and maps its ``pop`` over every field, three calls a step, and the
    trace search takes several steps an event (docs/conformance.md, "Session 23"). The same
    values, the same class; only an unknown name is refused as any keyword is (``TypeError``)."""
    fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    keywords = ", ".join(f"{name}=_SAME" for name in fields)
    values = ", ".join(f"self[{i}] if {name} is _SAME else {name}" for i, name in enumerate(fields))
    source = f"def _replace(self, *, {keywords}):\n    return _new(_cls, ({values},))\n"
    namespace: dict[str, Any] = {"_SAME": object(), "_new": tuple.__new__, "_cls": cls}
    exec(source, namespace)  # as ``collections.namedtuple`` builds its ``__new__``
    replace = namespace["_replace"]
    replace.__doc__ = f"{cls.__name__} with the variables named set to the values given."
    replace.__qualname__ = f"{cls.__name__}._replace"
    setattr(cls, "_replace", replace)  # noqa: B010  (NamedTuple refuses it in the class body)
    return cls


# --------------------------------------------------------------------------- declarations

InvariantFn = Callable[[Any, Any], str | None]
"""A state predicate: ``(constants, state) -> None`` when it holds, else what is wrong."""

Domain = Callable[[Any], Iterable[Hashable]]
"""A parameter domain: a function of the constants, e.g. ``Workers(c) -> ("w0", "w1")``."""

ActionResult = Any  # None | state | Emitted[state]


@dataclass(frozen=True)
class Action:
    """``\\E p \\in D1, x \\in D2 : Name(p, x)`` — a guarded, labelled step.

    The first parameter is the *process* that takes the step: fairness,
    context switches and counterexample tables are per process.
    """

    name: str
    fn: Callable[..., ActionResult]
    domains: tuple[Domain, ...]
    event: str | None  # the trace event it produces, or None for an internal step
    doc: str = ""
    # The program counters of the process from which the step can fire (``None``: any);
    # a hint for the explorer, redundant with the action's own guard.
    at: frozenset[Hashable] | None = None

    def instances(self, constants: Any) -> list[tuple[Hashable, ...]]:
        """Every parameter tuple of this action under ``constants`` (the cross product of its domains)."""
        return cross_product([list(domain(constants)) for domain in self.domains])


def cross_product(domains: Sequence[Sequence[Hashable]]) -> list[tuple[Hashable, ...]]:
    """``D1 \\X D2 \\X ...`` in lexicographic order: the parameter tuples of an action.

    post: len(__return__) == _product(len(d) for d in domains)
    post: all(len(t) == len(domains) for t in __return__)
    post: all(t[i] in domains[i] for t in __return__ for i in range(len(domains)))
    """
    combos: list[tuple[Hashable, ...]] = [()]
    for domain in domains:
        combos = [(*prefix, v) for prefix in combos for v in domain]
    return combos


def _product(sizes: Iterable[int]) -> int:
    total = 1
    for n in sizes:
        total *= n
    return total


@dataclass(frozen=True)
class Invariant:
    name: str
    fn: Callable[[Any, Any], str | None]
    doc: str = ""
    # The state variables the predicate reads (``None``: unknown, so any). A hint for the
    # explorer, which need not re-evaluate the predicate on values of them it has seen.
    reads: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ProgramCounter:
    """``pc[p]`` for every process ``p`` of a domain: where that process is in its program."""

    domain: Domain
    fn: Callable[..., Hashable]  # (constants, state, process) -> pc


@dataclass(frozen=True)
class WF:
    """Weak fairness of every process of a domain: ``\\A p \\in D : WF_vars(Next(p))``.

    A process that stays able to take some step eventually takes one.
    """

    domain: Domain


@dataclass(frozen=True)
class LeadsTo:
    """``P ~> Q``: whenever ``P`` holds, ``Q`` holds then or later."""

    name: str
    p: Callable[[Any, Any], bool]
    q: Callable[[Any, Any], bool]
    doc: str = ""


@dataclass(frozen=True)
class EventuallyAlways:
    """``<>[]Q``: every behaviour ends up in states where ``Q`` holds, for good."""

    name: str
    q: Callable[[Any, Any], bool]
    doc: str = ""


Property = LeadsTo | EventuallyAlways


class SpecError(Exception):
    """The specification or its configuration is wrong (exit code 2), not the design."""


@dataclass(frozen=True)
class Spec:
    """A specification: what the explorer explores and the validator replays traces against."""

    name: str
    doc: str = ""
    init_fn: Callable[[Any], Iterable[Any]] | None = None
    actions: tuple[Action, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    assumptions: tuple[Invariant, ...] = ()
    fair: tuple[WF, ...] = ()
    program_counters: tuple[ProgramCounter, ...] = ()
    properties: tuple[Property, ...] = ()
    symmetry_fn: Callable[[Any, Any], Any] | None = None
    terminal_fn: Callable[[Any, Any], bool] | None = None
    constraint_fn: Callable[[Any, Any], bool] | None = None
    describe_fn: Callable[[Any, Any], Mapping[str, Any]] | None = None
    variant: str | None = None  # the name of a mutant, None for the design itself

    # -- the declarations a spec module makes, in TLA+ order -------------------------------
    # Spec is frozen so variants can share actions safely; declarations build a new value
    # and store it back on the module-level holder (see ``SpecBuilder``).


class SpecBuilder:
    """The mutable holder a spec module declares into; ``.spec`` is the finished ``Spec``."""

    def __init__(self, name: str, doc: str = "") -> None:
        self.spec = Spec(name=name, doc=doc)

    def _set(self, **changes: Any) -> None:
        self.spec = replace(self.spec, **changes)

    def assume(self, fn: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
        """``ASSUME``: a condition on the constants; a violated one is a configuration error."""
        self._set(assumptions=(*self.spec.assumptions, Invariant(fn.__name__, lambda c, _s: fn(c), _doc(fn))))
        return fn

    def init(self, fn: Callable[[Any], Iterable[Any]]) -> Callable[[Any], Iterable[Any]]:
        self._set(init_fn=fn)
        return fn

    def action(
        self, *domains: Domain, event: str | None = None, at: Hashable | Iterable[Hashable] | None = None
    ) -> Callable[[Callable[..., ActionResult]], Callable[..., ActionResult]]:
        """Declare ``\\E p \\in domains[0], ... : fn(c, s, p, ...)``; ``event=None`` is internal.

        ``at``: the program counter(s) of ``p`` the step can fire from (a string or a
        collection of them); the domain must have a ``program_counter``.
        """
        if not domains:
            raise SpecError("an action needs at least the domain of the process that takes it")
        where = _pcs(at)

        def decorate(fn: Callable[..., ActionResult]) -> Callable[..., ActionResult]:
            if any(a.name == fn.__name__ for a in self.spec.actions):
                raise SpecError(f"action {fn.__name__} declared twice")
            if where is not None and not any(pc.domain is domains[0] for pc in self.spec.program_counters):
                raise SpecError(f"action {fn.__name__} gives at= but its processes have no program_counter")
            action = Action(fn.__name__, fn, tuple(domains), event, _doc(fn), where)
            self._set(actions=(*self.spec.actions, action))
            return fn

        return decorate

    def program_counter(self, domain: Domain) -> Callable[[Callable[..., Hashable]], Callable[..., Hashable]]:
        """Declare ``pc[p]`` for the processes of ``domain``, the value actions' ``at=`` refers to."""

        def decorate(fn: Callable[..., Hashable]) -> Callable[..., Hashable]:
            if any(pc.domain is domain for pc in self.spec.program_counters):
                raise SpecError(f"program counter of {getattr(domain, '__name__', domain)} declared twice")
            self._set(program_counters=(*self.spec.program_counters, ProgramCounter(domain, fn)))
            return fn

        return decorate

    @overload
    def invariant(self, fn: InvariantFn) -> InvariantFn: ...

    @overload
    def invariant(self, *, reads: str | Iterable[str]) -> Callable[[InvariantFn], InvariantFn]: ...

    def invariant(
        self, fn: InvariantFn | None = None, *, reads: str | Iterable[str] | None = None
    ) -> InvariantFn | Callable[[InvariantFn], InvariantFn]:
        """``@spec.invariant``, or ``@spec.invariant(reads=("queue", ...))`` naming every state
        variable the predicate reads (through the helpers it calls, too): then its verdict
        is a function of those variables' values, which the explorer may remember.
        """
        names = _reads(reads)

        def decorate(fn: InvariantFn) -> InvariantFn:
            self._set(invariants=(*self.spec.invariants, Invariant(fn.__name__, fn, _doc(fn), names)))
            return fn

        return decorate if fn is None else decorate(fn)

    def fairness(self, *conditions: WF) -> None:
        self._set(fair=(*self.spec.fair, *conditions))

    def property(self, prop: Property) -> None:
        self._set(properties=(*self.spec.properties, prop))

    def symmetry(self, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """A canonical representative of the state's orbit under interchangeable processes."""
        self._set(symmetry_fn=fn)
        return fn

    def terminal(self, fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
        """States where the system is legitimately done: having no successor there is not a deadlock."""
        self._set(terminal_fn=fn)
        return fn

    def constraint(self, fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
        """A state constraint: states outside it are not expanded (and the verdict says so)."""
        self._set(constraint_fn=fn)
        return fn

    def describe(
        self, fn: Callable[[Any, Any], Mapping[str, Any]]
    ) -> Callable[[Any, Any], Mapping[str, Any]]:
        """How to show a state to a person: variable name -> readable value."""
        self._set(describe_fn=fn)
        return fn


def _doc(fn: Callable[..., Any]) -> str:
    return (fn.__doc__ or "").strip().split("\n")[0]


def _reads(reads: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if reads is None:
        return None
    names = (reads,) if isinstance(reads, str) else tuple(reads)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(f"reads= names state variables, and {name!r} is not a variable name")
    return names


def _pcs(at: Hashable | Iterable[Hashable] | None) -> frozenset[Hashable] | None:
    if at is None:
        return None
    if isinstance(at, str) or not isinstance(at, Iterable):
        return frozenset([at])
    where = frozenset(at)
    if not where:
        raise SpecError("at= names no program counter: the action could never fire")
    return where


def at_least_one(c: Any, *names: str) -> str | None:
    """For an ``ASSUME``: None when every named constant is at least 1, else which one is not."""
    for name in names:
        if getattr(c, name) < 1:
            return f"{name} must be at least 1"
    return None


# --------------------------------------------------------------------------- variants


def variant(
    base: Spec,
    name: str,
    *,
    replace_actions: Mapping[str, Callable[..., ActionResult] | Action] | None = None,
    add_actions: Sequence[Action] = (),
    drop_actions: Sequence[str] = (),
    drop_assumptions: Sequence[str] = (),
) -> Spec:
    """A named buggy variant (mutant) of ``base``: some actions swapped, added or removed.

    A replacement given as a function keeps the action's domains and event; give
    an ``Action`` to change them (a step that was logged and no longer is). It
    drops the ``at=`` hint: the new guard may fire from other program counters.
    """
    known = {a.name for a in base.actions}
    replacing = dict(replace_actions or {})
    for missing in (set(replacing) | set(drop_actions)) - known:
        raise SpecError(f"variant {name}: {base.name} has no action {missing}")

    def swapped(a: Action) -> Action:
        new = replacing[a.name]
        if isinstance(new, Action):
            return new
        return replace(a, fn=new, name=new.__name__, doc=_doc(new), at=None)

    actions = [swapped(a) if a.name in replacing else a for a in base.actions if a.name not in drop_actions]
    actions.extend(add_actions)
    assumptions = tuple(a for a in base.assumptions if a.name not in drop_assumptions)
    return replace(base, actions=tuple(actions), assumptions=assumptions, variant=name)


# --------------------------------------------------------------------------- stepping


@dataclass(frozen=True, slots=True)
class Transition:
    """One step of a behaviour: who did what, and what the trace would show."""

    action: Action
    args: tuple[Hashable, ...]
    state: Any  # the state after the step
    fields: Mapping[str, Any] | None  # the event's fields, or None when internal

    @property
    def process(self) -> Hashable:
        return self.args[0]

    @property
    def event(self) -> str | None:
        return self.action.event


@dataclass
class Instance:
    """A spec bound to its constants: the parameter tuples are computed once."""

    spec: Spec
    constants: Any
    bound: list[tuple[Action, list[tuple[Hashable, ...]]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for assumption in self.spec.assumptions:
            problem = assumption.fn(self.constants, None)
            if problem is not None:
                raise SpecError(f"ASSUME {assumption.name} fails for these constants: {problem}")
        if self.spec.init_fn is None:
            raise SpecError(f"spec {self.spec.name} declares no initial states")
        counted = {id(pc.domain) for pc in self.spec.program_counters}
        for a in self.spec.actions:
            if a.at is not None and id(a.domains[0]) not in counted:
                raise SpecError(f"action {a.name} gives at= but its processes have no program_counter")
        self.bound = [(a, a.instances(self.constants)) for a in self.spec.actions]

    def initial_states(self) -> list[Any]:
        assert self.spec.init_fn is not None
        return list(self.spec.init_fn(self.constants))

    def successors(self, state: Any) -> Iterator[Transition]:
        """Every enabled step from ``state``, in declaration order."""
        c = self.constants
        for action, instances in self.bound:
            fn = action.fn
            for args in instances:
                result = fn(c, state, *args)
                if result is None:
                    continue
                if type(result) is Emitted:
                    yield Transition(action, args, result.state, result.fields)
                else:
                    yield Transition(action, args, result, None)

    def violated_invariants(self, state: Any) -> Iterator[tuple[Invariant, str]]:
        c = self.constants
        for inv in self.spec.invariants:
            reason = inv.fn(c, state)
            if reason is not None:
                yield inv, reason

    def is_terminal(self, state: Any) -> bool:
        fn = self.spec.terminal_fn
        return fn is not None and fn(self.constants, state)

    def describe(self, state: Any) -> dict[str, Any]:
        if self.spec.describe_fn is not None:
            return dict(self.spec.describe_fn(self.constants, state))
        if hasattr(state, "_asdict"):
            return {k: _plain(v) for k, v in state._asdict().items()}
        return {"state": repr(state)}

    def fair_processes(self) -> set[Hashable]:
        return {p for wf in self.spec.fair for p in wf.domain(self.constants)}


def _plain(value: Any) -> Any:
    """A JSON-friendly rendering of a state value."""
    if isinstance(value, Function):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | Seq):
        return [_plain(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Public face of ``_plain`` for renderers."""
    return _plain(value)
