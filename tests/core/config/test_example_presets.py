"""A built-in preset that trains an example of the repository's ``examples/`` folder is usable from a source
checkout and says why not where the wheel installed rlpanel without that folder."""

from __future__ import annotations

import shutil

import core.config.presets as presets
from core.config.presets import list_presets


def test_the_graph_preset_is_usable_here_and_refused_by_name_without_the_examples_folder(tmp_path, monkeypatch):
    here = {p.name: p for p in list_presets()}
    assert here["graph-attention"].error is None
    shipped = tmp_path / "site" / "configs" / "presets"  # the wheel's layout: configs/ with no examples/ beside it
    shutil.copytree(presets.builtin_presets_dir(), shipped)
    monkeypatch.setattr(presets, "builtin_presets_dir", lambda: shipped)
    there = {p.name: p for p in list_presets()}
    error = there["graph-attention"].error
    assert error and "examples.graph_env" in error and "source checkout" in error
    assert there["laptop-8gb"].error is None  # the others are untouched
