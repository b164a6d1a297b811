"""`lanecheck report`: the static design-review site, built from the registered designs alone.

Everything on a page comes from a ``Design`` object and its spec (no per-design code here):
``site.write_site`` is the one entry point; each other module renders or computes one part.
"""

from __future__ import annotations

from model_checks.report.site import write_site

__all__ = ["write_site"]
