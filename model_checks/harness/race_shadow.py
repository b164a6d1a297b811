"""The race detector's shadow memory of one location (``races.RaceDetector.shadow``): its last
write and each thread's last read since, and whether an access is ordered after them (FastTrack's
epochs against the accessing thread's vector clock). ``_race_filter.c`` reads its fields too."""

from __future__ import annotations

from model_checks.harness.race_sites import Site


class Loc:
    """Shadow memory of one location: the last write and each thread's last read since."""

    __slots__ = ("reads", "w_epoch", "w_site", "w_tid")

    def __init__(self) -> None:
        self.w_tid = -1
        self.w_epoch = 0
        self.w_site: Site | None = None
        self.reads: dict[int, tuple[int, Site]] = {}


def at(vc: list[int], i: int) -> int:
    return vc[i] if i < len(vc) else 0


def unordered(loc: Loc, tid: int, vc: list[int], write: bool) -> Site | None:
    """The site of an access to ``loc`` that thread ``tid`` (at vector clock ``vc``) is not ordered
    after: the last write by another thread, or (for a write) another thread's read since. None
    when every such access happens before this one."""
    u = loc.w_tid
    if u >= 0 and u != tid and loc.w_site is not None and loc.w_epoch > at(vc, u):
        return loc.w_site
    if write:
        for r, (epoch, rsite) in loc.reads.items():
            if r != tid and epoch > at(vc, r):
                return rsite
    return None
