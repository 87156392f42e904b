"""The Configure panel: presets, environment, schema-generated forms, the estimate's bar and Launch.

``model`` (``ConfigModel``), ``state`` (``ConfigState``), ``panel``, ``forms`` and ``fields`` (built from the
schema's field index), ``env_picker``, ``presets_box``, ``preset_diff``, ``schedule_editor``, ``fit_bar`` and
``estimator`` (the estimate, recomputed as settings change), ``steps_hint``, ``threads_hint``, ``engine_hint``,
``hints`` (advice with a one-click fix), ``zoo_import``, ``tune_dialog``, ``own_network`` (a file's classes read
with ast, never run), ``wheel_guard``, ``fold`` (Configure folds away on a laptop screen). The Seeds field beside
Launch starts a group of seeds through the one launch path."""
