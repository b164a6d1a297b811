"""The work-stealing corpus (tests/work_stealing/corpus): each trace gets its verdict from both
engines (design_corpus.py says how). The traces come from the outside review of the validators
(/tmp/tracereview, session 42): a push by a worker that runs no task, an unpark before the park,
global-lock traces, and the two cases where the spec engine asked every look for work to be logged
(agreed since session 43, docs/work-stealing-trace.md, "Looks a port may skip"), each with a valid
and an invalid near variant."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.work_stealing.design_corpus import corpus_tests

pytestmark = pytest.mark.timeout(120)

test_corpus_case, test_corpus_is_complete = corpus_tests(Path(__file__).parent / "corpus")
