"""A helper module ``review10_readers_programs.py``'s threads import lazily (review 10's t47): its
body, run by the first import, fills a list the importers then read."""

LOADS: list[int] = []
LOADS.append(1)
