"""runtime.engine: sbx trains through the same worker as SB3: ``rlpanel train --set runtime.engine=sbx`` finishes with
its records, loss charts, time split, checkpoints and evaluations; a stopped SBX run resumes exactly (its steps, its
replay buffer and VecNormalize statistics); JAX's settings and device are the worker's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.config.errors import ConfigError
from core.config.steps import planned_steps
from core.config.validate import validate_config
from core.estimate.xla import set_jax_env
from core.launch.control import launch_worker, stop_run
from core.run.status import read_status
from core.run.store import load_run_config
from core.util.files import read_json
from core.util.paths import user_home
from tests.conftest import REPO
from tests.training_helpers import cli, last_step, lean_args, make_run, records, wait_for

pytestmark = pytest.mark.training

SBX = ("--set", "runtime.engine=sbx")


def rlpanel(*args: str, home) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *lean_args(args)], capture_output=True, text=True, timeout=400,
                          cwd=REPO, env={**{k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"},
                                         "RLPANEL_HOME": str(home)})  # an in-process tool set this test process's own


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    """One finished SBX PPO run on CartPole, trained by the command line, with checkpoints and evaluations."""
    home = tmp_path_factory.mktemp("sbx_ppo")
    done = rlpanel("train", "--algo", "PPO", "--env", "CartPole-v1", *SBX, "--timesteps", "2048",
                   "--set", "ppo.n_steps=128", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=2",
                   "--set", "runtime.n_envs=4", "--set", "runtime.seed=3", "--set", "budget.checkpoint_every=1024",
                   "--set", "budget.eval_every=1024", "--set", "budget.eval_episodes=2",
                   "--runs-dir", str(home / "runs"), "--json", home=home)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"] == "finished", result
    return home / "runs" / result["id"]


def test_an_sbx_ppo_run_trains_to_finished_with_every_record_of_an_sb3_run(ppo_run):
    status = read_status(ppo_run)
    assert status.state == "finished" and status.device == "cpu"  # JAX's device: this machine has no GPU
    assert status.exit_reason == "reached 2,048 of 2,048 steps"
    notes = [r["message"] for r in records(ppo_run, "event") if r["message"].startswith("device ")]
    assert len(notes) == 1 and "engine sbx: jax " in notes[0] and "sbx 0." in notes[0]
    # the loss charts: SBX's own train/ keys reach metrics.jsonl
    train = {k for r in records(ppo_run, "train") for k in r if k.startswith("train/")}
    assert {"train/value_loss", "train/entropy_loss", "train/policy_gradient_loss", "train/approx_kl"} <= train
    assert records(ppo_run, "episode") and records(ppo_run, "progress")[-1]["step"] == 2048
    summary = read_json(ppo_run / "summary.json")
    assert summary["timesteps"] == 2048 and summary["steps_per_s"] > 0
    split = summary["time_split"]  # the rollouts' edges are SB3's callbacks in SBX too
    assert split["collect_s"] > 0 and split["train_s"] > 0
    evals = records(ppo_run, "eval")
    assert [e["step"] for e in evals] == [1024, 2048] and summary["best_eval"] is not None
    latest = read_json(ppo_run / "checkpoints" / "latest.json")
    assert latest["step"] == 2048
    # what it compiled is kept in the user folder: the next run of these shapes loads it instead of compiling again
    assert any((ppo_run.parent.parent / "cache" / "jax-compiled").iterdir())


def test_an_sbx_checkpoint_is_sbxs_own_zip(ppo_run):
    from sbx import PPO

    latest = read_json(ppo_run / "checkpoints" / "latest.json")
    model = PPO.load(str(ppo_run / "checkpoints" / latest["model"]), device="cpu")
    assert model.num_timesteps == 2048 and model.seed == 3
    best = read_json(ppo_run / "checkpoints" / "best.json")
    assert PPO.load(str(ppo_run / "checkpoints" / best["model"]), device="cpu").num_timesteps == best["step"]


def test_an_sbx_sac_run_stops_and_resumes_exactly_with_its_replay_buffer_and_normalisation(runs_dir):
    run = make_run(runs_dir, {"algo": "SAC", "env": {"id": "Pendulum-v1", "step_timeout_s": 60},
                              "sac": {"learning_starts": 100, "batch_size": 64, "buffer_size": 10_000},
                              "policy": {"net_arch": [32, 32]},
                              "runtime": {"engine": "sbx", "seed": 5, "normalize": {"obs": True}, "stall_after_s": 600},
                              "budget": {"total_timesteps": 1_000_000, "checkpoint_every": 200}})
    launch_worker(run)
    wait_for(lambda: last_step(run) >= 400, timeout=240, what="training progress")
    assert stop_run(run, timeout=120) == "graceful"
    status = read_status(run)
    assert status.state == "stopped" and "STOP file" in status.exit_reason
    latest = read_json(run / "checkpoints" / "latest.json")
    stopped_at = latest["step"]
    assert stopped_at == last_step(run) > 0 and latest.get("vecnormalize") and latest.get("replay_buffer")

    done = cli("resume", run.name, "--timesteps", "300", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"
    [resumed] = [e["message"] for e in records(run, "event") if e["message"].startswith("resumed")]
    # SB3's count (and SBX's, the same loop): the step a callback stops on is counted, its transition not stored
    assert resumed in [f"resumed from the checkpoint at step {stopped_at:,} with {n:,} transitions in the replay buffer"
                       for n in (stopped_at - 1, stopped_at)]
    cfg = load_run_config(run)
    budget = cfg.budget.model_copy(update={"total_timesteps": stopped_at + 300})  # what resume --timesteps 300 plans
    planned = planned_steps(cfg.model_copy(update={"budget": budget}), start=stopped_at)
    progress = [r["step"] for r in records(run, "progress")]
    assert progress == sorted(progress) and progress[-1] == planned.steps == stopped_at + 300
    summary = read_json(run / "summary.json")
    assert summary["attempts"] == 2 and summary["timesteps"] == stopped_at + 300
    train = {k for r in records(run, "train") for k in r if k.startswith("train/")}
    assert {"train/actor_loss", "train/critic_loss", "train/ent_coef"} <= train


def test_the_same_seed_trains_the_same_sbx_network_and_another_seed_another():
    from core.worker.factory import build_model, build_vec_env

    def params(seed: int):
        cfg = validate_config({"algo": "PPO", "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
                               "policy": {"net_arch": [8]}, "runtime": {"engine": "sbx", "seed": seed}}).config
        env, _ = build_vec_env(cfg, force_dummy=True)
        model = build_model(cfg, env, device="cpu")
        model.learn(64)
        import jax

        return jax.tree_util.tree_leaves(model.policy.actor_state.params)

    first, again, other = params(7), params(7), params(8)
    assert all((a == b).all() for a, b in zip(first, again, strict=True))
    assert not all((a == b).all() for a, b in zip(first, other, strict=True))


def test_jax_is_set_before_it_loads_no_preallocation_and_the_cpu_where_the_run_trains_there():
    env: dict[str, str] = {}
    set_jax_env("auto", "linux", env)
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and "JAX_PLATFORMS" not in env  # a GPU: allocated as needed
    # compiled programs kept in the user folder for the next run of the same shapes, every one (each compiles in < 1 s)
    assert env["JAX_COMPILATION_CACHE_DIR"] == str(user_home() / "cache" / "jax-compiled")
    assert env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0" and int(env["JAX_COMPILATION_CACHE_MAX_SIZE"]) > 0
    env = {}
    set_jax_env("cpu", "linux", env)
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and env["JAX_PLATFORMS"] == "cpu"
    env = {"JAX_COMPILATION_CACHE_DIR": "/theirs"}
    set_jax_env("cpu", "linux", env)
    assert env["JAX_COMPILATION_CACHE_DIR"] == "/theirs" and "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in env
    env = {}
    set_jax_env("cuda", "win32", env)  # JAX has no CUDA on Windows
    assert env["JAX_PLATFORMS"] == "cpu"
    env = {"XLA_PYTHON_CLIENT_PREALLOCATE": "true", "XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}
    set_jax_env("auto", "linux", env)
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"  # the user's own choice stays


def test_a_cuda_device_jax_lacks_is_refused_naming_the_field(monkeypatch):
    from core.worker import sbx_engine

    monkeypatch.setattr(sbx_engine, "_gpus", lambda: [])  # a CPU jax (this machine's), whatever the test machine has
    assert sbx_engine.jax_device("auto") == "cpu" and sbx_engine.jax_device("cpu") == "cpu"
    with pytest.raises(ConfigError) as err:
        sbx_engine.jax_device("cuda")
    assert str(err.value).startswith("runtime.device: cuda was asked for an SBX run but jax ")
    assert 'install CUDA jax (pip install "jax[cuda12]"); use cpu or auto, or set runtime.engine: sb3' in str(err.value)
    monkeypatch.setattr(sbx_engine.sys, "platform", "win32")
    with pytest.raises(ConfigError, match="JAX has no CUDA on Windows: an SBX run trains on the CPU there"):
        sbx_engine.jax_device("cuda:0")


def test_an_sbx_runs_gpu_is_found_without_a_torch_context_beside_jaxs(monkeypatch):
    from core.telemetry.nvml import NvmlStatus
    from core.worker import devices

    uuids = ["GPU-fa4e0000-0000-4000-8000-000000000000", "GPU-fa4e0000-0000-4000-8000-000000000001"]
    monkeypatch.setattr(devices, "nvml_status", lambda: NvmlStatus(True, None, "555.0", 2))
    monkeypatch.setattr(devices, "gpu_uuids", lambda: uuids)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def torch_asked(index: int) -> str:
        raise AssertionError("torch was asked: it would make a CUDA context in an SBX run")

    monkeypatch.setattr(devices, "torch_uuid", torch_asked)
    assert devices.run_gpu("cuda:1", ask_torch=False).gpu == 1
    with pytest.raises(AssertionError, match="torch was asked"):
        devices.run_gpu("cuda:1")  # an SB3 run asks torch for the UUID
