"""The site owns its output folder: stale pages go, a user's files are never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_checks.report.ownership import MANIFEST, OutFolderError, previous_files, settle
from model_checks.report.site import write_site


def _site(out: Path, files: list[str]) -> list[Path]:
    """A fake previous report: ``files`` written and listed in its manifest."""
    paths = []
    for name in files:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("old", encoding="utf-8")
        paths.append(path)
    settle(out, set(), paths)
    return paths


def test_a_new_or_empty_folder_has_no_previous_files(tmp_path: Path) -> None:
    assert previous_files(tmp_path / "new") == set()
    assert previous_files(tmp_path) == set()


def test_pages_the_new_report_did_not_write_are_removed(tmp_path: Path) -> None:
    _site(tmp_path, ["index.html", "d/index.html", "d/mutants/gone.html", "old/index.html"])
    before = previous_files(tmp_path)
    assert before == {"index.html", "d/index.html", "d/mutants/gone.html", "old/index.html"}
    removed = settle(tmp_path, before, [tmp_path / "index.html", tmp_path / "d" / "index.html"])
    assert removed == ["d/mutants/gone.html", "old/index.html"]
    assert not (tmp_path / "d" / "mutants").exists() and not (tmp_path / "old").exists()
    assert (tmp_path / "d" / "index.html").exists()
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["files"] == ["d/index.html", "index.html"]


def test_a_folder_with_a_users_files_is_refused_naming_them(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutFolderError, match=r"not from a previous report.*notes\.txt"):
        previous_files(tmp_path)
    # a previous report's folder where the user added a file: refused too, the file kept
    site = tmp_path / "site"
    site.mkdir()
    _site(site, ["index.html"])
    (site / "review-comments.md").write_text("mine", encoding="utf-8")
    with pytest.raises(OutFolderError, match=r"not listed in its report manifest.*review-comments\.md"):
        write_site(site, quick=True)
    assert (site / "review-comments.md").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"kind": "something else", "files": []}),
        json.dumps({"kind": "lanecheck report", "files": ["../outside.html"]}),
        json.dumps({"kind": "lanecheck report", "files": ["/etc/passwd"]}),
        json.dumps(["index.html"]),
    ],
)
def test_a_manifest_that_is_not_ours_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / MANIFEST).write_text(text, encoding="utf-8")
    with pytest.raises(OutFolderError, match="not a report manifest"):
        previous_files(tmp_path)


@pytest.mark.timeout(240)
def test_write_site_drops_the_pages_of_a_design_no_longer_shown(
    plugin_registered: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    _site(out, ["index.html", "handoff/mutants/a-mutant-since-removed.html", "other-design/index.html"])
    write_site(out, ["handoff"], quick=True)
    assert not (out / "handoff" / "mutants" / "a-mutant-since-removed.html").exists()
    assert not (out / "other-design").exists()
    assert (out / "handoff" / "mutants" / "check-then-wait.html").exists()
    listed = set(json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"])
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {MANIFEST}
    assert listed == on_disk
