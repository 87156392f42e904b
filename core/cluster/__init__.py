"""Runs on a Ray cluster: each run a Ray job whose entrypoint is the run's supervisor (ARCHITECTURE.md, "Processes")."""
