"""baselines: the ``python -m baselines.run`` CLI, configs, reports and benchmarks."""
