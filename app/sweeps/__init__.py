"""The Sweeps tab: an Optuna sweep's trials, objective, importance and parallel coordinates."""
