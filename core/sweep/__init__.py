"""Sweeps: an Optuna study over a search space, each trial a normal run (ARCHITECTURE.md, "Sweeps")."""
