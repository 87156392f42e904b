"""A run's name as every list and title shows it: the user's display name (``annotations.json``: the
window's Notes box, ``rlpanel annotate``, a sweep's "NAME #trial"), else the name in its config
(the run name typed in Configure, a queue job's name), else its id (the folder).

The Runs tab, Results, the Monitor's title, the Queue's jobs and ``rlpanel runs`` all call
``run_label``; the id stays beside it where a user needs it (a tooltip, a column, the title).
"""

from __future__ import annotations

from pathlib import Path

from core.run.annotations import read_annotations
from core.run.layout import RunDir


def run_label(run_id: str, display_name: str | None, config_name: str | None) -> str:
    """The display name, else the config's name, else the id."""
    return display_name or config_name or run_id


def config_name(run_dir: Path) -> str | None:
    """The ``name`` of the run's config.yaml (None: none, or a config that cannot be read)."""
    return _config_text(run_dir, "name")


def config_algo(run_dir: Path) -> str | None:
    """The ``algo`` of the run's config.yaml as written (None: none, or a config that cannot be read)."""
    return _config_text(run_dir, "algo")


def _config_text(run_dir: Path, key: str) -> str | None:
    from core.util.yaml_reader import read_yaml_mapping  # the YAML parser: with the first run read, not at import

    try:
        value = read_yaml_mapping(RunDir(run_dir).config).get(key)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, str) and value else None


def read_run_label(run_dir: Path) -> str:
    """``run_label`` read from the run folder (for a caller without its ``RunInfo``)."""
    run_dir = Path(run_dir)
    return run_label(run_dir.name, read_annotations(run_dir).display_name, config_name(run_dir))
