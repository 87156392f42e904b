"""The window: a Qt view on ``core`` (docs/window.md).

The window's first frame needs neither pydantic nor the config schema: its forms are built from the schema's fields
shipped as plain data (``core.config.field_index``), and the schema loads with the first validation, right after that
frame. (This module once imported the schema before any Qt import: pydantic, touched lazily after PySide6 was
imported, failed with a circular import inside shiboken's import hook. PySide6 6.11 with pydantic 2.14 loads it after
Qt, through that hook, cleanly; tests/app/test_startup.py loads the whole schema that way.)
"""
