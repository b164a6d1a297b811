"""Tests of the event-object pool design (design 003)."""
