"""The owner of a state is the same in every process: a digest, not Python's salted hash."""

from __future__ import annotations

import copyreg
import pickle
import subprocess
import sys

import pytest

from model_checks.explorer.ray import fingerprint, portable
from spec.language import Append, Function, Seq, Tail

STATE = (Function(("a", "b"), ("idle", None)), ("p0", 3, None), frozenset({"x", "y"}), Seq(["m", "n"]))
SNIPPET = """
from spec.language import Function, Seq
from model_checks.explorer.ray import fingerprint
state = (Function(("a", "b"), ("idle", None)), ("p0", 3, None), frozenset({"x", "y"}), Seq(["m", "n"]))
print(fingerprint.digest(state), hash(state))
"""


def _in_process(seed: str) -> tuple[int, int]:
    out = subprocess.run(
        [sys.executable, "-c", SNIPPET],
        env={"PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        check=True,
    )
    digest, salted = out.stdout.split()
    return int(digest), int(salted)


@pytest.mark.timeout(60)
def test_digest_is_the_same_under_other_hash_seeds_where_hash_is_not() -> None:
    one, two = _in_process("1"), _in_process("2")
    assert one[1] != two[1]  # the bad case: Python's hash differs between processes
    assert one[0] == two[0] == fingerprint.digest(STATE)


def test_equal_values_digest_alike_and_unequal_ones_apart() -> None:
    assert fingerprint.digest(True) == fingerprint.digest(1) == fingerprint.digest(1.0)
    assert fingerprint.digest((1, "a")) != fingerprint.digest((1, "a", None))
    assert fingerprint.digest("1") != fingerprint.digest(1)
    assert fingerprint.digest(frozenset({1, 2})) == fingerprint.digest(frozenset({2, 1}))
    # A sequence by its elements, however it was built, and never as the tuple it is not equal to.
    assert fingerprint.digest(Tail(Append(Seq(["l", "m"]), "n"))) == fingerprint.digest(Seq(["m", "n"]))
    assert fingerprint.digest(Seq(["m", "n"])) != fingerprint.digest(("m", "n"))


def test_a_value_without_canonical_encoding_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="cannot fingerprint a object"):
        fingerprint.digest((1, object()))


def test_owner_is_in_range_and_remembered() -> None:
    owner = fingerprint.Owner((0,), 3)
    assert owner(STATE) == fingerprint.digest(STATE[0]) % 3
    assert owner.memo == {STATE[0]: owner(STATE)}


def test_functions_are_pickled_by_value_and_rehashed(monkeypatch: pytest.MonkeyPatch) -> None:
    # As before install() (another test may have installed it in this process); restored after.
    monkeypatch.delitem(copyreg.dispatch_table, Function, raising=False)
    stale = Function((0, 1), (None, 2))
    object.__setattr__(stale, "_hash", 12345)  # as a copy from another process would carry
    assert pickle.loads(pickle.dumps(stale))._hash == 12345  # the bad case, before install()
    portable.install()
    back = pickle.loads(pickle.dumps(stale))
    assert back == Function((0, 1), (None, 2)) and hash(back) == hash((None, 2))
