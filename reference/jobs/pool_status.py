"""The pool's status file: what the controller last saw and decided, for ``lanecheck jobs pool-status``.

The controller rewrites it at every reconcile (a temporary file renamed over it, so a reader sees
a whole document or the previous one). A reader also learns whether it is **stale**: the
controller's process is gone (kill -9) or has not written for three intervals; then the workers it
lists may still be finishing their last job, but nobody reconciles any more.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

DEFAULT_FILE = "lanecheck-pool.json"
ENV = "LANECHECK_JOBS_POOL_STATUS"
STALE_INTERVALS = 3


def default_path() -> Path:
    return Path(os.environ.get(ENV) or DEFAULT_FILE)


def write(path: Path, doc: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def read(path: Path, now: float | None = None) -> dict[str, Any]:
    """The status document with ``stale`` (and ``stale_reason``) added; ``ValueError`` naming the
    file when there is none or it is not a pool status."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no pool status at {path} (is a pool running with this --status-file?)") from None
    except (OSError, UnicodeError, json.JSONDecodeError) as problem:
        raise ValueError(f"cannot read the pool status {path}: {problem}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("controller"), int):
        raise ValueError(f"{path} is not a pool status file")
    now = time.time() if now is None else now
    reason = None
    if doc.get("phase") != "stopped":
        if not _alive(doc["controller"]):
            reason = f"controller {doc['controller']} is not running"
        elif now - float(doc.get("updated_at", 0)) > STALE_INTERVALS * float(doc.get("interval", 1)) + 1:
            reason = f"not updated for {now - float(doc.get('updated_at', 0)):.0f} s"
    return {**doc, "stale": reason is not None, "stale_reason": reason}


def lines(doc: dict[str, Any]) -> list[str]:
    """The status for people: one line for the pool, one per worker."""
    last = doc.get("last") or {}
    memory = doc.get("available")
    head = (
        f"pool {doc.get('name')} (controller {doc['controller']}): {doc.get('phase')},"
        f" {len(doc.get('workers', []))} workers [{doc.get('min_workers')}..{doc.get('max_workers')}],"
        f" backlog {doc.get('backlog')}, available "
        f"{'unknown' if memory is None else f'{memory >> 20} MiB'},"
        f" last: start {last.get('start', 0)} stop {last.get('stop', 0)} ({last.get('reason', '-')}"
        f"{', held back: ' + last['held_back'] if last.get('held_back') else ''})"
    )
    out = [head]
    if doc.get("stale"):
        out.append(f"STALE: {doc.get('stale_reason')}")
    if doc.get("error"):
        out.append(f"error: {doc['error']}")
    for w in doc.get("workers", []):
        peak = w.get("peak")
        out.append(
            f"worker {w['name']} pid {w['pid']}: {w['state']}{' busy' if w.get('busy') else ''}"
            f"{'' if peak is None else f', peak {peak >> 20} MiB'}"
        )
    return out
