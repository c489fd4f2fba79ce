"""Scoring runs: pairing items, per-item work, executors, and the results log."""
