"""A group of seeds through the one launch path: the checks made for the N runs together, before any starts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.config.spaces import probe_spaces
from core.config.validate import validate_config
from core.estimate import disk
from core.estimate.result import FitEstimate
from core.launch.start import StartError, group_load_note, group_memory_problem, start_group, start_problem
from core.run.store import RunStore

GIB = 2**30


def test_the_free_space_is_checked_for_all_runs_of_a_group_before_the_first(runs_dir, monkeypatch):
    cfg = validate_config({"algo": "DQN", "dqn": {"buffer_size": 100_000}}).config
    need = disk.disk_needed(cfg, probe_spaces(cfg.env))
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: SimpleNamespace(free=int(2.5 * need), total=10**12, used=0))
    with pytest.raises(StartError) as refused:
        start_group(RunStore(runs_dir), cfg, [0, 1, 2])
    text = str(refused.value)
    assert "the 3 runs' checkpoints need about" in text and "per run" in text and "budget.keep_checkpoints" in text
    assert list(runs_dir.iterdir()) == []  # nothing created
    assert start_problem(runs_dir, cfg) is None  # one run of it would fit: the group is what does not


def estimate(on_gpu: bool, gpu_gib: float, host_gib: float) -> FitEstimate:
    return FitEstimate(verdict="fits", capacity_bytes=8 * GIB if on_gpu else 16 * GIB, gpu_bytes=int(gpu_gib * GIB),
                       host_bytes=int(host_gib * GIB), terms=[], gpu_name="RTX 4060 Laptop", host_verdict="fits",
                       host_capacity_bytes=16 * GIB, parameter_count=1000, on_gpu=on_gpu)


def test_a_group_that_does_not_fit_side_by_side_is_said():
    est = estimate(True, 3, 1)
    assert group_memory_problem(est, 1) is None and group_memory_problem(est, 2) is None
    why = group_memory_problem(est, 3)
    assert why and "3 runs at once need about 9.0 GiB of RTX 4060 Laptop's 8.0 GiB (3.00 GiB each)" in why
    assert "queue job with seeds" in why
    host = group_memory_problem(estimate(False, 0, 6), 3)
    assert host and "of host RAM's 16.0 GiB" in host
    planned_elsewhere = estimate(True, 20, 1)  # planned for another card; this machine's own estimate decides
    planned_elsewhere.this_machine = estimate(False, 0, 1)
    assert group_memory_problem(planned_elsewhere, 5) is None


def test_more_runs_than_cores_is_said():
    assert group_load_note(2, cores=2) is None
    note = group_load_note(5, cores=2)
    assert note and "5 runs at once on 2 CPU cores" in note and "queue job with seeds" in note
