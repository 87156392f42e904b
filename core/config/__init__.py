"""The run config: one typed schema, one table per algorithm, presets, env spaces (no torch, no Qt).

Read top-down: ``fields`` and ``errors`` -> ``algorithms/`` -> ``schema`` -> ``validate`` ->
``presets``; ``dotted`` handles raw config data by ``--set`` path; ``spaces`` reads an env's
observation and action spaces; ``field_index`` holds the schema's fields as plain data for the window
(``field_index.json``, written by ``python -m core.config.field_scan --write``). See ARCHITECTURE.md, "Config".
"""
