"""Same-trace conformance: does some behaviour of the spec produce this trace?

``validate_file(path)`` / ``validate_stream(binary)`` / ``validate_lines(lines)`` return a ``Verdict``;
``lanecheck validate TRACE`` is the command (docs/trace-format.md, docs/ports.md).
"""

from model_checks.conformance.designs import ENGINES
from model_checks.conformance.validator import validate_file, validate_lines, validate_stream
from model_checks.conformance.verdict import Verdict

__all__ = ["ENGINES", "Verdict", "validate_file", "validate_lines", "validate_stream"]
