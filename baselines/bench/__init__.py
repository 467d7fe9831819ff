"""Benchmarks: scripts that print figures and ratios against a reference measured in the same run.

Run one with ``python -m baselines.bench NAME``; ``python -m baselines.bench`` lists them.
"""
