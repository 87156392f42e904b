"""Telemetry: GPU readings through NVML (``nvml``), host figures (``host``), the worker's
recording thread (``recorder``) and what is read back from ``telemetry.jsonl`` (``thinning``,
``summary``). Knows files, not run folders: the caller names the file (ARCHITECTURE.md, "Telemetry").
"""
