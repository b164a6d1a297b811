"""Small helpers that several test packages share (each module has one job)."""
