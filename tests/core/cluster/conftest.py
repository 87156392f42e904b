"""The Ray head of the cluster tests: one per module that uses it (its processes stopped when the module ends,
not left running beside the rest of the suite), skipped with the reason when the ``ray`` extra is missing."""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    if importlib.util.find_spec("ray") is None:
        pytest.skip('the ray extra is not installed (pip install "rlpanel[ray]"): no Ray head to run cluster tests on')
    from tests.core.cluster.ray_head import start_head, stop_head

    log = tmp_path_factory.mktemp("ray-head") / "ray-start.log"
    head = start_head(log)
    try:
        yield head
    finally:
        stop_head(head)
