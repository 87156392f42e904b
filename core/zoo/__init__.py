"""rl_zoo3's hyperparameter files: read its entries into presets and write configs back as entries
(ARCHITECTURE.md, "rl_zoo3 import and export")."""
