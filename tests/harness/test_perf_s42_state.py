"""Session 42: putting back the umask after each execution (review 9, ``patch_state._Process``)
read it with two system calls (set, set back) and set it a third time where it had changed; it is
now set back to the saved mask outright, one call, changed or not."""

from __future__ import annotations

import os

import pytest

from model_checks.harness import patch_state

pytestmark = pytest.mark.timeout(60)


def test_the_umask_is_put_back_with_one_system_call(monkeypatch: pytest.MonkeyPatch) -> None:
    process = patch_state._Process()
    calls: list[int] = []
    real = patch_state._real_umask

    def counted(mask: int) -> int:
        calls.append(mask)
        return real(mask)

    monkeypatch.setattr(patch_state, "_real_umask", counted)
    before = os.umask(0o077 if process.umask != 0o077 else 0o022)  # a program's change
    try:
        process.restore()
        assert calls == [process.umask], calls
        now = real(0o022)
        real(now)
        assert now == process.umask, (oct(now), oct(process.umask))
        process.restore()  # unchanged: still the one call
        assert calls == [process.umask, process.umask], calls
    finally:
        real(before)
