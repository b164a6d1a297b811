"""Tests of the work-stealing design (design 001)."""
