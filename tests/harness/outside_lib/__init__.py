"""A package the programs of tests/harness/outside_programs.py import, as a program imports its
project's package found through ``PYTHONPATH`` (a ``src/`` layout, an editable install): its
locks made at import must be stood in for, though only the program's module is given to
``patched()``."""
