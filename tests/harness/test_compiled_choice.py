"""``model_checks/compiled_choice.py``: a group decided "pure" is loaded from its sources, with a
warning exactly when a build went wrong (stale, partial, unreachable), none when the sources were
asked for or nothing was built."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

from model_checks.compiled_choice import EARLIER, HIDDEN, CompiledGroup, paths

MODULES = ("lanecheck_scratch_a", "lanecheck_scratch_b")


class ScratchWarning(UserWarning):
    pass


def _tree(root: Path, *, built: tuple[str, ...], source_newer: bool = False) -> str:
    for name in MODULES:
        source, loaders = paths(name, str(root))
        Path(source).write_text(f"WHERE = 'source of {name}'\n")
        if name in built:
            Path(loaders[0]).write_bytes(b"no group named here")
            older, newer = (loaders[0], source) if source_newer else (source, loaders[0])
            os.utime(older, (1_000_000, 1_000_000))
            os.utime(newer, (2_000_000, 2_000_000))
    return str(root)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)


@pytest.mark.parametrize(
    ("built", "source_newer", "warned"),
    [
        (MODULES, True, "lanecheck_scratch_a.py is newer than its compiled module"),
        (MODULES[:1], False, "only some of scratch's modules were compiled"),
        ((), False, None),
    ],
)
def test_pure_groups_load_their_sources_and_warn_only_for_a_build_gone_wrong(
    tmp_path: Path, built: tuple[str, ...], source_newer: bool, warned: str | None
) -> None:
    group = CompiledGroup(
        MODULES, "scratch", ScratchWarning, _tree(tmp_path, built=built, source_newer=source_newer)
    )
    assert group.kind == "pure"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        group.install("slower")
    said = [str(w.message) for w in caught if issubclass(w.category, ScratchWarning)]
    assert said == (
        []
        if warned is None
        else [f"lanecheck: {warned}; running scratch as Python (slower). Rebuild it with `pip install -e .`."]
    )
    import lanecheck_scratch_a  # type: ignore[import-not-found]

    assert lanecheck_scratch_a.WHERE == "source of lanecheck_scratch_a"


def test_asked_for_sources_are_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANECHECK_PURE", "1")
    group = CompiledGroup(MODULES, "scratch", ScratchWarning, _tree(tmp_path, built=MODULES))
    assert (group.kind, group.why) == ("pure", "LANECHECK_PURE=1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        group.install("slower")
    import lanecheck_scratch_b  # type: ignore[import-not-found]

    assert lanecheck_scratch_b.WHERE == "source of lanecheck_scratch_b"


# -- hidden groups: loaders a plain import never finds (``spec/function.py``'s) -----------------------


def _hidden_tree(root: Path, *, source_newer: bool = False, hidden: bool = True) -> str:
    """Sources, and a loader per module (not a real extension: loading it fails) under the hidden
    name, or under the plain one with ``hidden=False``."""
    for name in MODULES:
        source, loaders = paths(name, str(root), hidden=hidden)
        Path(source).write_text(f"WHERE = 'source of {name}'\n")
        Path(loaders[0]).write_bytes(b"no group named here")
        older, newer = (loaders[0], source) if source_newer else (source, loaders[0])
        os.utime(older, (1_000_000, 1_000_000))
        os.utime(newer, (2_000_000, 2_000_000))
    return str(root)


def test_a_plain_import_never_finds_a_hidden_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _hidden_tree(tmp_path)
    assert Path(paths(MODULES[0], root, hidden=True)[1][0]).name.startswith(f"{MODULES[0]}{HIDDEN}.")
    monkeypatch.syspath_prepend(root)
    import lanecheck_scratch_a

    assert lanecheck_scratch_a.WHERE == "source of lanecheck_scratch_a"


def test_a_plain_import_finds_a_loader_under_the_plain_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Why hidden loaders have their own name: under the plain one the import system loads them first.
    monkeypatch.syspath_prepend(_hidden_tree(tmp_path, hidden=False))
    with pytest.raises(ImportError):
        import lanecheck_scratch_a  # noqa: F401


def test_a_hidden_group_decided_compiled_loads_its_hidden_loaders(tmp_path: Path) -> None:
    group = CompiledGroup(MODULES, "scratch", ScratchWarning, _hidden_tree(tmp_path), hidden=True)
    assert (group.kind, group.why) == ("compiled", "built at install")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        group.install("slower")
    # the finder hands the import the hidden loader (here not a real extension, so it fails)
    with pytest.raises(ImportError, match=HIDDEN.replace(".", r"\.")):
        import lanecheck_scratch_a  # noqa: F401


def test_a_hidden_group_imported_before_the_decision_says_its_sources_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _hidden_tree(tmp_path)
    monkeypatch.syspath_prepend(root)
    import lanecheck_scratch_b

    group = CompiledGroup(MODULES, "scratch", ScratchWarning, root, hidden=True)
    assert group.kind == "compiled"
    group.install("slower")
    assert (group.kind, group.why) == ("pure", EARLIER)
    assert lanecheck_scratch_b.WHERE == "source of lanecheck_scratch_b"


def test_a_stale_hidden_group_runs_its_sources_with_a_warning(tmp_path: Path) -> None:
    group = CompiledGroup(
        MODULES, "scratch", ScratchWarning, _hidden_tree(tmp_path, source_newer=True), hidden=True
    )
    assert group.kind == "pure" and "lanecheck_scratch_a.py is newer" in group.why
    with pytest.warns(ScratchWarning, match="newer than its compiled module"):
        group.install("slower")
    import lanecheck_scratch_a

    assert lanecheck_scratch_a.WHERE == "source of lanecheck_scratch_a"
