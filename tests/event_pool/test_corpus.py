"""The event-pool corpus (tests/event_pool/corpus): each trace gets its verdict from both engines
(tests/work_stealing/design_corpus.py says how). From the outside review of the validators (session
42): a wait logged after its signal's SetEvent was surely made cannot time out (rule 6), and the
same timeout with the wait logged before the poster's next event is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.work_stealing.design_corpus import corpus_tests

pytestmark = pytest.mark.timeout(120)

test_corpus_case, test_corpus_is_complete = corpus_tests(Path(__file__).parent / "corpus")
