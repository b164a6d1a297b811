"""The work-stealing corpus (tests/work_stealing/corpus): each trace gets its verdict from both
engines (design_corpus.py says how). The traces come from the outside review of the validators
(/tmp/tracereview, session 42): a push by a worker that runs no task, an unpark before the park,
global-lock traces, and the two cases where the spec engine still asks every look for work to be
logged (docs/work-stealing-trace.md, "Where the engines still differ")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.work_stealing.design_corpus import corpus_tests

pytestmark = pytest.mark.timeout(120)

test_corpus_case, test_corpus_is_complete = corpus_tests(Path(__file__).parent / "corpus")
