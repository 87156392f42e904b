"""Results across runs: ``table`` (one row per run, the columns every export uses),
``settings_diff`` (the settings that tell runs apart), ``curves`` (the overlay's reward curves),
``export`` (md, csv, xlsx, tex, html) and ``svg`` (curves drawn from the data).
"""
