"""The Work Lane's trace format: its reader, its two engines, its schema and its verify rows."""
