"""The Sweeps tab: an Optuna sweep's trials (``panel``: Run/Stop/Resume, Save best as preset) and ``charts``
(objective over trials, importance, parallel coordinates)."""
