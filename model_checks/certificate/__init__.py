"""Certificates of `lanecheck verify`: for every row, the code it ran (sha256 of each file), its
configuration, the counts explored, its verdict, the tool versions and the machine.

``deps`` finds the files a unit of the plan depends on; ``document`` is the file's format;
``run`` reuses unchanged units' verdicts in `verify --certificate`; ``audit`` is
`lanecheck certificate check`. docs/verification.md describes them.
"""
