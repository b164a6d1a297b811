"""A module whose setting ``review6_programs.import_from_race`` reads with ``from ... import``."""

limit = 1
