"""A run is a folder: ``layout`` names its files, ``status`` and ``states`` say where it stands,
``records`` builds the lines of ``metrics.jsonl``, ``store`` lists and creates runs, ``control``
launches, stops and resumes workers, ``summary`` computes what ``summary.json`` holds.
See ARCHITECTURE.md, "The run folder".
"""
