"""A tiny third-party design: one producer hands items to one consumer through a one-slot box."""
