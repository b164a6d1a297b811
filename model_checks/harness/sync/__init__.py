"""Thin controlled primitives: each method announces one operation to the scheduler and returns
its result. No decisions are taken here (``primitives.py``, ``fifo.py``)."""
