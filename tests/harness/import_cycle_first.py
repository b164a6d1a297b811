"""One of two modules that import each other after a pause (tests/harness/import_programs.py)."""

import time

time.sleep(0.01)

NAME = "first"
