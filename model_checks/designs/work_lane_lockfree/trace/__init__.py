"""Trace format version 2 of the lock-free Work Lane: per-atomic-step events (docs/trace-format.md)."""
