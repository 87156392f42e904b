"""The run config: one typed schema, one table per algorithm, presets, env spaces (no torch, no Qt).

Read top-down: ``fields`` and ``errors`` -> ``algorithms/`` -> ``schema`` -> ``validate`` ->
``presets``; ``dotted`` handles raw config data by ``--set`` path; ``spaces`` reads an env's
observation and action spaces. See ARCHITECTURE.md, "Config".
"""
