"""The Configure panel: presets, environment, schema-generated forms, fit bar and Launch."""

from app.configure.panel import ConfigurePanel, LaunchRequest

__all__ = ["ConfigurePanel", "LaunchRequest"]
