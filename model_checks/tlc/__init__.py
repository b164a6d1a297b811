"""The TLA+ twin of the specs (``spec/tla/``), run by TLC: model generation, running, parsing."""
