"""The Configure panel: presets, environment, schema-generated forms, fit bar and Launch."""
