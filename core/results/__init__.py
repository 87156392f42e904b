"""Results across runs: tables, statistics across seeds, curves, exports and the morning report.

``table`` (``ResultRow``, ``COLUMNS``: one row per run, every export's columns), ``settings_diff``, ``grouping``
(``RunGroup``: a seed group's runs), ``stats`` (mean ± se, t-interval, IQM and bootstrap CIs, Welch, probability of
improvement, performance profile), ``group_table``, ``group_curves`` (a group's seeds on shared steps, with a band),
``multienv`` (normalised scores across envs), ``curves``, ``export`` (md, csv, xlsx, tex, html), ``svg`` and
``profile_svg``, ``baselines`` (each env's baseline run), ``report`` (the morning report). docs/results.md."""
