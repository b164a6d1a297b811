"""Writes the golden corpus (``python -m tests.conformance.make_corpus``): traces + manifest.json.

The cases stand in their own modules: allowed (``corpus_allowed``), refused with the step and rule
(``corpus_refused``), under another configuration (``corpus_configured``) and malformed with the
line, given verbatim (``corpus_malformed``); ``corpus_steps`` builds their events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conformance.corpus_allowed import VALID
from tests.conformance.corpus_configured import CONFIGURED
from tests.conformance.corpus_malformed import MALFORMED
from tests.conformance.corpus_refused import INVALID
from tests.conformance.corpus_steps import lines_of

HERE = Path(__file__).parent / "corpus"


def main(folder: Path = HERE) -> None:
    """Write every case as ``folder/NAME.jsonl`` and, beside them, the manifest of their verdicts."""
    files: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for name, steps in VALID.items():
        files[f"valid_{name}"] = (lines_of(steps), {"code": 0, "prefix": name.startswith("prefix")})
    for name, (steps, seq, rule) in INVALID.items():
        files[f"invalid_{name}"] = (lines_of(steps), {"code": 1, "seq": seq, "rule": rule})
    for name, (steps, config, verdict) in CONFIGURED.items():
        files[name] = (lines_of(steps, config), verdict)
    for name, (raw, line) in MALFORMED.items():
        files[f"malformed_{name}"] = (raw, {"code": 2, "line": line})
    folder.mkdir(exist_ok=True)
    manifest: dict[str, dict[str, Any]] = {}
    for name, (lines, verdict) in files.items():
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        manifest[f"{name}.jsonl"] = verdict
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
