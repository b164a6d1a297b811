"""A module a test program imports inside its threads (tests/harness/import_programs.py): its body
pauses at a scheduling point, so a second thread importing it meanwhile must wait for it."""

import time

time.sleep(0.01)
VALUE = 42
USES: list[int] = []  # each execution's import of the module starts it empty
