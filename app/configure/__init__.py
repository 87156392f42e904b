"""The Configure panel: presets, environment, schema-generated forms, fit bar and Launch."""

# pydantic loads its submodules lazily; one first touched after PySide6 is imported goes through
# shiboken's import hook, which inspects pydantic mid-import and fails with a circular import.
# Load the schema (and so pydantic) completely before any Qt import.
import core.config  # noqa: F401, I001

from app.configure.panel import ConfigurePanel, LaunchRequest

__all__ = ["ConfigurePanel", "LaunchRequest"]
