"""``python -m tests.fuzz.probe_bad_input [-k WORD] [-v]``: run the probe, exit 1 on any bad class."""

from __future__ import annotations

import sys

from tests.fuzz.probe_bad_input.probe import main

sys.exit(main(sys.argv[1:]))
