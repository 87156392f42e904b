"""The library under the window: config, estimate, telemetry, runs, queue, sweeps, results, the command line
and the training worker. Imports no Qt (an import-linter contract); one package per concept, layered as
ARCHITECTURE.md, "Layers" draws. This root holds its packages only."""
