"""The work-stealing design (design 001): Chase-Lev deques, an injector, parking, fork/join."""

from __future__ import annotations

from model_checks.design import Design
from model_checks.designs.work_stealing.configs import CONFIGS
from model_checks.designs.work_stealing.spec_mutants import MUTANTS
from spec.work_stealing import BOTTOM, SPEC, TOP

DESIGN = Design(
    name="work-stealing",
    spec=SPEC,
    configs=CONFIGS,
    mutants=MUTANTS,
    summary="Chase-Lev deques per worker, an injector, parking with re-check, fork/join; SC or TSO memory",
    projections={
        "worker": lambda c, s: s.worker[c.worker_names()[0]].pc,
        "deque": lambda c, s: s.mem.cells[BOTTOM("w0")] - s.mem.cells[TOP("w0")],
        "store buffer": lambda c, s: len(s.mem.pending(c.worker_names()[0])),
        "client": lambda c, s: s.client[0],
    },
)
