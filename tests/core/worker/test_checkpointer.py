"""Issue 11, points 8, 10 and 11: checkpoints come after the records they cover, are complete or
absent (a manifest with sizes), and a failed save (a full disk) leaves no temp or partial file."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from core.run.checkpoints import find_checkpoint
from core.run.layout import RunDir
from core.util.jsonl import JsonlWriter, read_jsonl


@pytest.fixture(scope="module")
def model():
    from stable_baselines3 import (
        PPO,  # torch: when run, not at collection
    )

    return PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, device="cpu")


def test_records_are_flushed_before_the_checkpoint_that_covers_them(tmp_path, model):
    from core.worker.checkpoints import Checkpointer  # torch: when run, not at collection
    out = JsonlWriter(tmp_path / "metrics.jsonl")
    order: list[str] = []

    def flush() -> None:
        order.append("flush")
        out.write([{"kind": "episode", "step": 10, "t": 0.0, "reward": 1.0, "length": 10}])
        out.sync()

    ckpt = Checkpointer(tmp_path, keep=2, events=out, before_save=flush)
    model.num_timesteps = 10
    entry = ckpt.save(model)
    assert order == ["flush"] and entry is not None
    assert [r["kind"] for r in read_jsonl(tmp_path / "metrics.jsonl")][:1] == ["episode"]
    assert find_checkpoint(tmp_path).checkpoint.step == 10


def test_a_refused_save_keeps_the_last_good_checkpoint(tmp_path, model):
    from core.worker.checkpoints import Checkpointer  # torch: when run, not at collection
    reason: list[str] = []
    ckpt = Checkpointer(tmp_path, keep=2, allowed=lambda: reason[0] if reason else None)
    model.num_timesteps = 20
    assert ckpt.save(model) is not None
    reason.append("loss is NaN")
    model.num_timesteps = 40
    assert ckpt.save(model) is None
    assert find_checkpoint(tmp_path).checkpoint.step == 20
    assert not RunDir(tmp_path).checkpoint_file(40, "model").exists()


@pytest.mark.parametrize("fail_on", ["model", "manifest"])
def test_a_full_disk_leaves_no_temp_or_partial_file(tmp_path, model, monkeypatch, fail_on):
    from core.worker.checkpoints import Checkpointer, CheckpointError  # torch: when run, not at collection
    ckpt = Checkpointer(tmp_path, keep=3)
    model.num_timesteps = 30
    ckpt.save(model)
    before = sorted(p.name for p in RunDir(tmp_path).checkpoints.iterdir())
    latest = RunDir(tmp_path).latest_checkpoint.read_text()

    def full(path, *args, **kwargs):
        Path(str(path)).write_bytes(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    if fail_on == "model":
        monkeypatch.setattr(model, "save", full)
    else:
        import core.worker.checkpoints as module

        real = module.write_json_atomic
        def manifest_fails(path, data):
            return full(path) if path.name.startswith("step_") else real(path, data)

        monkeypatch.setattr(module, "write_json_atomic", manifest_fails)
    model.num_timesteps = 60
    with pytest.raises(CheckpointError) as err:
        ckpt.save(model)
    assert err.value.errno == errno.ENOSPC
    assert "no space left on device" in str(err.value).lower() and "step_000000000060" in str(err.value)
    assert sorted(p.name for p in RunDir(tmp_path).checkpoints.iterdir()) == before
    assert RunDir(tmp_path).latest_checkpoint.read_text() == latest
    assert find_checkpoint(tmp_path).checkpoint.step == 30


def test_temp_files_of_a_killed_save_are_removed_at_the_next_start(tmp_path):
    from core.worker.checkpoints import Checkpointer  # torch: when run, not at collection
    folder = RunDir(tmp_path).checkpoints
    folder.mkdir(parents=True)
    (folder / ".tmp-step_000000000100.zip").write_bytes(b"x" * 1000)
    (folder / "latest.json").write_text(json.dumps({"step": 1}))
    ckpt = Checkpointer(tmp_path, keep=2)
    assert ckpt.removed_temps == 1 and not list(folder.glob(".tmp-*"))
