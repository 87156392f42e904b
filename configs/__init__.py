"""The shipped configuration: GPU profiles (gpus.yaml) and built-in presets (presets/), package data."""
