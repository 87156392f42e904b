"""A tune's probe of a candidate that leaves torch_threads empty ("auto") measures with the count the real run will
use here (``core.util.threads``), not torch's own default: the same thread environment before torch loads, the same
``set_num_threads``, and the same serving child as a candidate that names that count."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import core.util.threads
from core.config.validate import validate_config
from core.estimate.device import worker_threads
from core.throughput.probe import process_key
from tests.conftest import REPO

SMALL = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"n_steps": 64, "n_epochs": 2}, "runtime": {"device": "cpu"}}


def small(**runtime):
    return validate_config({**SMALL, "runtime": {**SMALL["runtime"], **runtime}}).config


def test_candidates_share_a_probe_child_by_the_count_they_resolve_to(monkeypatch):
    monkeypatch.setattr(core.util.threads, "usable_cores", lambda: 8)
    auto4, auto8 = small(vec_env="subproc", n_envs=4), small(vec_env="subproc", n_envs=8)
    assert worker_threads(auto4, "cpu").count == 4 and worker_threads(auto8, "cpu").count == 1
    assert process_key(auto4) != process_key(auto8)  # same settings as typed, different runs: a child each
    assert process_key(auto4) == process_key(small(vec_env="subproc", n_envs=4, torch_threads=4))
    assert process_key(small(vec_env="dummy", n_envs=2)) == process_key(small(vec_env="dummy", n_envs=2, torch_threads=8))


@pytest.mark.training
def test_an_auto_candidate_is_probed_with_the_runs_thread_count(tmp_path):
    auto = small(vec_env="dummy", n_envs=1)
    count = worker_threads(auto, "cpu").count  # what a worker launched here would use (1 on this 2-core machine)
    candidates = [auto, small(vec_env="dummy", n_envs=1, torch_threads=count),
                  small(vec_env="dummy", n_envs=1, torch_threads=count + 1)]
    requests = []
    for i, cfg in enumerate(candidates):
        (tmp_path / f"c{i}.yaml").write_text(cfg.to_yaml(), encoding="utf-8")
        requests.append({"config": str(tmp_path / f"c{i}.yaml"), "out": str(tmp_path / f"r{i}.json"), "seconds": 0.3})
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-m", "core.worker.throughput_probe", "--serve"],
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          cwd=REPO, env={**env, "PYTHONPATH": str(REPO)}, timeout=600)
    assert done.returncode == 0, done.stderr
    auto_run, named, other = (json.loads((tmp_path / f"r{i}.json").read_text()) for i in range(3))
    assert auto_run["steps_per_s"] > 0 and auto_run["torch_threads"] == count
    assert named["steps_per_s"] > 0 and named["torch_threads"] == count  # the same process: nothing differs
    assert "needs a fresh one" in other["error"] and f"'torch_threads': {count + 1}" in other["error"]
