"""``FieldReader`` (``_field_reader.c``) reads what ``operator.attrgetter`` reads, raises what it
raises (of a class that hooks attribute access, what ``object.__getattribute__`` reads: the hook
is the program's code), and follows a type changed after its first read;
``object_kinds.field_reader`` gives one where the C module is built, and the state search explores
as many states either way."""

from __future__ import annotations

import operator
from typing import Any

import pytest

from model_checks.harness import examples
from model_checks.harness.rt import object_kinds, objects
from model_checks.harness.rt.native import NATIVE, NATIVE_WHY
from model_checks.harness.rt.object_kinds import _names
from model_checks.harness.stateful import StatefulResult, check_states

pytestmark = [
    pytest.mark.skipif(NATIVE is None, reason=f"no C module: {NATIVE_WHY}"),
    pytest.mark.timeout(120),
]


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self) -> None:
        self.a = [1]


class Plain:
    def __init__(self) -> None:
        self.x = 1


class Sub(Slotted):
    pass


class Hooked:
    __slots__ = ("a",)
    a: object

    def __getattr__(self, name: str) -> object:
        return f"hooked {name}"


class Intercepting:
    def __init__(self) -> None:
        self.x = 1

    def __getattribute__(self, name: str) -> object:
        return f"intercepted {name}"


def _both(t: type, names: tuple[str, ...], obj: object) -> tuple[Any, Any]:
    """(what attrgetter gives or raises, what FieldReader gives or raises), a raise as its type."""
    assert NATIVE is not None
    out = []
    for reader in (operator.attrgetter(*names), NATIVE.FieldReader(t, names)):
        try:
            out.append(reader(obj))
        except Exception as exc:  # the same error type either way
            out.append(type(exc))
    return out[0], out[1]


def _compiled_thread() -> objects.ThreadState:
    return objects.ThreadState(0, "t0", 0)


CASES = [
    ("compiled class", objects.ThreadState, _names(objects.ThreadState), _compiled_thread),
    ("slots, one unset", Slotted, ("a", "b"), Slotted),
    ("slots, set one", Slotted, ("a",), Slotted),
    ("class and dict", Plain, ("__class__", "__dict__"), Plain),
    ("a name that is no data descriptor", Plain, ("x",), Plain),
    ("a missing name", Plain, ("nope",), Plain),
    ("a subclass instance", Slotted, ("a",), Sub),
]


@pytest.mark.parametrize(("t", "names", "make"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_it_reads_and_raises_what_attrgetter_does(t: type, names: tuple[str, ...], make: Any) -> None:
    obj = make()
    for _ in range(3):  # the first read looks the descriptors up; the next ones use them
        expected, got = _both(t, names, obj)
        assert got == expected


def _set_hooked() -> Hooked:
    obj = Hooked()
    obj.a = 2
    return obj


@pytest.mark.parametrize(
    ("t", "names", "make", "expected"),
    [
        (Hooked, ("a",), Hooked, AttributeError),
        (Hooked, ("a",), _set_hooked, 2),
        (Intercepting, ("__class__", "__dict__"), Intercepting, (Intercepting, {"x": 1})),
        (Intercepting, ("x",), Intercepting, 1),
    ],
    ids=["__getattr__, slot not set", "__getattr__, slot set", "__getattribute__", "__getattribute__, x"],
)
def test_a_class_that_hooks_attribute_access_is_read_without_the_hook(
    t: type, names: tuple[str, ...], make: Any, expected: object
) -> None:
    """Session 40 (p095): the hook is the program's code, which the fingerprint must not run (one
    taking a lock took a controlled lock outside any controlled thread). Until then this class
    was read as ``attrgetter`` reads it, through the hook (``__getattr__``'s "hooked a")."""
    assert NATIVE is not None
    for reader in (NATIVE.FieldReader(t, names), object_kinds._raw_reader(names)):
        for _ in range(2):
            try:
                got: object = reader(make())
            except AttributeError:
                got = AttributeError
            assert got == expected


def test_a_type_changed_after_the_first_read_is_read_as_it_is_now() -> None:
    assert NATIVE is not None

    class Changing:
        __slots__ = ("a",)
        a: object

    obj = Changing()
    obj.a = 1
    reader = NATIVE.FieldReader(Changing, ("a",))
    assert reader(obj) == 1
    slot = Changing.__dict__["a"]
    name = "a"  # (set on the class by name: mypy forbids assigning a slot's name on the class)
    setattr(Changing, name, property(lambda self: "now a property"))
    assert reader(obj) == "now a property" == operator.attrgetter("a")(obj)
    setattr(Changing, name, slot)
    assert reader(obj) == 1


def test_it_refuses_what_it_cannot_read() -> None:
    assert NATIVE is not None
    with pytest.raises(ValueError, match="at least one name"):
        NATIVE.FieldReader(Plain, ())
    with pytest.raises(TypeError):
        NATIVE.FieldReader(Plain, ("x", 1))
    with pytest.raises(TypeError):
        NATIVE.FieldReader(Plain, ("x",))()


def test_the_fingerprint_uses_it_where_it_is_built() -> None:
    assert isinstance(object_kinds.field_reader(Slotted, ("a", "b")), NATIVE.FieldReader)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "program",
    [examples.bounded_buffer(1, 2, 2, 1), examples.handoff(use_while=True)],
    ids=["bounded-buffer", "handoff"],
)
def test_the_state_search_explores_as_many_states_with_attrgetter(
    program: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_c = check_states(program)
    monkeypatch.setattr(object_kinds, "NATIVE", None)
    # the readers are made once per type: made again, with attrgetter
    from model_checks.harness.rt import reducers, seeds

    monkeypatch.setattr(reducers, "_GETTERS", {})
    monkeypatch.setattr(reducers, "_REDUCERS", {})
    monkeypatch.setattr(seeds, "_INSTANCE_CHECKS", {})
    with_attrgetter = check_states(program)
    assert isinstance(with_c, StatefulResult) and isinstance(with_attrgetter, StatefulResult)
    assert with_c.verdict == with_attrgetter.verdict == "exhaustive"
    assert (with_c.states, with_c.executions, with_c.outcomes) == (
        with_attrgetter.states,
        with_attrgetter.executions,
        with_attrgetter.outcomes,
    )
