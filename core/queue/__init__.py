"""The night's plan: ``plan`` (the YAML of jobs), ``state`` (``.queue/state.json`` and the
scheduling rules), ``control`` (start, continue, cancel) and ``runner`` (the detached process).
See ARCHITECTURE.md, "Processes".
"""
