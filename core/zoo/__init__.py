"""rl_zoo3's hyperparameter files: read its entries into presets and write configs back as entries.

``pyexpr`` (the zoo's Python-ish strings read with ast), ``translate`` (entry -> config fields, Drop), ``importer``
(``ImportResult``), ``export`` (config -> entry), ``envs`` (the pip package an env needs). docs/zoo.md."""
