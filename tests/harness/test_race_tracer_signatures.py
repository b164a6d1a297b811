"""The C tracer's hot helpers take what their Python twins (``race_frames.py_*``) take: the stub
(``_race_tracer.pyi``) gives them the twins' types, so the two must not drift apart."""

from __future__ import annotations

import inspect
import re

import pytest

from model_checks.harness import race_frames

HELPERS = ["stack_value", "join", "sync_op"]


@pytest.mark.parametrize("name", HELPERS)
def test_a_python_twin_takes_positional_arguments_only(name: str) -> None:
    twin = getattr(race_frames, f"py_{name}")
    params = list(inspect.signature(twin).parameters.values())
    assert {p.kind for p in params} == {inspect.Parameter.POSITIONAL_ONLY}
    with pytest.raises(TypeError, match="positional-only arguments passed as keyword"):
        twin(*[None] * (len(params) - 1), **{params[-1].name: None})


@pytest.mark.parametrize("name", HELPERS)
def test_the_c_helper_takes_the_python_twins_arguments(name: str) -> None:
    native = race_frames.NATIVE
    if native is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    helper = getattr(native, name)
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        helper(x=None)
    # called wrongly, the C helper states its arguments: ``join(into: list, other: list)``
    with pytest.raises(TypeError) as wrong:
        helper()
    stated = re.fullmatch(rf"{name}\((.*)\)", str(wrong.value))
    assert stated is not None, str(wrong.value)
    names = [part.split(":")[0].strip() for part in stated.group(1).split(",")]
    assert names == list(inspect.signature(getattr(race_frames, f"py_{name}")).parameters)
