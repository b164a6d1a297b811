"""r047 (CORRECT, 60 of 60 real runs pass): each worker creates a fresh file named by
``uuid4`` with mode ``"x"``, in a folder made at import. Explored from the command line
(``test_review8_import_draws.py``): each execution leaves its files behind, as a real run does."""

from __future__ import annotations

import os
import tempfile
import threading
import uuid

FOLDER = tempfile.mkdtemp(prefix="lanecheck_r047_")


def _worker() -> None:
    with open(os.path.join(FOLDER, uuid.uuid4().hex), "x") as f:
        f.write("x")


def main() -> None:
    ts = [threading.Thread(target=_worker) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
