"""Test envs for the benchmarks (importable as ``bench.envs.<module>`` from the repository root)."""
