"""Exploration strategies: each is a ``Chooser`` the scheduler asks at every step."""
