"""The state fingerprint's hot paths switched to their Python code for a test (``python_paths``):
the C ones (``_fingerprint_hot.c``) and these must write the same digests and see the same
changes."""

from __future__ import annotations

import pytest

from model_checks.harness.rt import dict_versions, encoder, seeds, thread_frames


def python_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on in this test (until ``monkeypatch`` undoes it): the Python reducer for every
    object (in each section built from now on), and the Python checks of seeded objects, dict
    versions and list and set items, and the walk of each thread's frames."""
    monkeypatch.setattr(encoder, "NATIVE", None)
    monkeypatch.setattr(encoder, "_same_items", encoder._same_items_in_python)
    monkeypatch.setattr(encoder, "same_versions", dict_versions._same_versions_in_python)
    monkeypatch.setattr(seeds, "same_versions", dict_versions._same_versions_in_python)
    monkeypatch.setattr(seeds, "_same_readings", seeds._same_readings_in_python)
    monkeypatch.setattr(thread_frames, "_walk", thread_frames.thread_frames_in_python)
