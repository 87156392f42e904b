"""An SBX (JAX) run's trained agent (issue 45): evaluate replays the run's own periodic evaluation of its best checkpoint
(PPO CartPole and SAC Pendulum, both with VecNormalize), seeded, sampled or not, any checkpoint; the tools' child sets
JAX as the worker does before jax loads, or says in one line that sbx is missing; watch streams and record writes an
mp4; export-policy refuses in one line naming runtime.engine; the results and their JSON name the engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import imageio.v2 as imageio
import pytest

from core.launch.agent_child import start_policy_tool
from core.results.table import columns_for, result_row
from core.run.evaluations import read_evaluations
from core.run.frame_stream import StreamEnd, StreamFrame, read_record
from core.util.files import read_json
from tests.conftest import REPO
from tests.training_helpers import cli, copy_run, train_sbx_template

pytestmark = pytest.mark.training

SAC_CONFIG = {"algo": "SAC", "env": {"id": "Pendulum-v1"}, "policy": {"net_arch": [32, 32]},
              "sac": {"learning_starts": 100, "batch_size": 64, "buffer_size": 10_000},
              "runtime": {"engine": "sbx", "n_envs": 1, "seed": 5, "normalize": {"obs": True}},
              "budget": {"total_timesteps": 600, "checkpoint_every": 300, "eval_every": 300, "eval_episodes": 2}}


@pytest.fixture(scope="module")
def sac_run(tmp_path_factory):
    """A finished SBX SAC Pendulum run with VecNormalize: checkpoints at 300 and 600, evaluations, a best one."""
    folder = tmp_path_factory.mktemp("sbx_sac")
    old = os.environ.get("RLPANEL_HOME")
    os.environ["RLPANEL_HOME"] = str(folder)
    try:
        return train_sbx_template(folder / "runs", SAC_CONFIG)
    finally:
        if old is None:
            os.environ.pop("RLPANEL_HOME", None)
        else:
            os.environ["RLPANEL_HOME"] = old


@pytest.fixture
def ppo_run(sbx_trained_run, tmp_path):
    return copy_run(sbx_trained_run, tmp_path / "runs")


@pytest.mark.parametrize("which", ["ppo_run", "sac_run"])
def test_the_best_checkpoint_replays_the_runs_own_evaluation_exactly(which, request):
    from core.agent.evaluate import evaluate

    run = request.getfixturevalue(which)
    best = read_json(run / "checkpoints" / "best.json")
    evals = {e["step"]: e["mean_reward"] for e in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
             if e.get("kind") == "eval"}
    assert evals[best["step"]] == best["mean_reward"] == max(evals.values())
    result = evaluate(run, "best", episodes=best["eval_episodes"], deterministic=True, seed=best["eval_seed"])
    # the run's own EvalCallback, with the best checkpoint's VecNormalize statistics: the same episodes, the same mean
    assert result.mean_reward == best["mean_reward"] and result.std_reward == pytest.approx(best["std_reward"])
    assert (result.checkpoint, result.checkpoint_step, result.episodes) == ("best", best["step"], best["eval_episodes"])


def test_an_sbx_evaluation_is_seeded_sampled_or_not_on_the_checkpoint_asked(sac_run):
    from core.agent.evaluate import evaluate

    sampled = evaluate(sac_run, "300", episodes=2, deterministic=False, seed=1)
    again = evaluate(sac_run, "300", episodes=2, deterministic=False, seed=1)
    assert sampled.rewards == again.rewards and sampled.checkpoint_step == 300  # JAX's sampling key is the run's seed
    assert evaluate(sac_run, "300", episodes=2, deterministic=True, seed=1).rewards != sampled.rewards
    last = evaluate(sac_run, "last", episodes=1, seed=1)
    assert (last.checkpoint, last.checkpoint_step, last.mean_length) == ("last", 600, 200.0)  # Pendulum: 200 steps


def test_rlpanel_evaluate_of_an_sbx_run_prints_and_keeps_the_result(ppo_run):
    done = cli("evaluate", "--runs-dir", str(ppo_run.parent), ppo_run.name, "--checkpoint", "512", "--episodes", "2",
               "--stochastic", "--seed", "4", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["checkpoint"], data["checkpoint_step"], data["episodes"], data["deterministic"]) == ("512", 512, 2, False)
    assert [e.to_json() for e in read_evaluations(ppo_run)] == [data]
    row = result_row(ppo_run)  # the Results table's row: the stored evaluation and the engine
    assert row.engine == "sbx" and row.stored_eval_checkpoint == 512


def test_the_tools_child_sets_jax_as_the_worker_does_before_jax_loads(ppo_run):
    code = ("import json, os, sys; from core.agent.load import load_policy; "
            "assert 'jax' not in sys.modules; p = load_policy(sys.argv[1], 'last'); import jax; p.close(); "
            "print(json.dumps([os.environ.get('XLA_PYTHON_CLIENT_PREALLOCATE'), os.environ.get('JAX_PLATFORMS'), "
            "jax.default_backend(), [c.__module__ for c in type(p.model).__mro__]]))")
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_PYTHON_CLIENT_PREALLOCATE", "JAX_PLATFORMS")}
    done = subprocess.run([sys.executable, "-c", code, str(ppo_run)], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    preallocate, platforms, backend, modules = json.loads(done.stdout.strip().splitlines()[-1])
    # the tools play on the CPU (--device cpu): no GPU backend, and no 75 % of a card taken beside a training run
    assert (preallocate, platforms, backend) == ("false", "cpu", "cpu")
    assert any(m.startswith("sbx.") for m in modules), modules  # SBX's class (or rlpanel's subclass of it)


def test_an_sbx_run_where_sbx_is_missing_is_one_line_naming_the_install(ppo_run, monkeypatch):
    from core.agent import load

    monkeypatch.setattr(load, "sbx_installed", lambda: False)
    with pytest.raises(LookupError) as caught:
        load.load_policy(ppo_run, "last")
    assert str(caught.value) == (f"run {ppo_run.name} trained with runtime.engine: sbx (JAX): its checkpoints load with "
                                 'sbx-rl, which is not installed in this Python: pip install "rlpanel[jax]"')


def test_watch_streams_an_sbx_agents_frames_and_record_writes_its_mp4(ppo_run, tmp_path):
    proc = start_policy_tool("play", ppo_run, "--stream", "--episodes", "1", stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    records = []
    while (record := read_record(proc.stdout)) is not None:
        records.append(record)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    frames, end = records[:-1], records[-1]
    assert isinstance(end, StreamEnd) and all(isinstance(f, StreamFrame) for f in frames)
    assert len(frames) == 1 + end.result["lengths"][0] and (frames[0].width, frames[0].height) == (600, 400)

    video = tmp_path / "agent.mp4"
    done = cli("record", ppo_run.name, "--runs-dir", str(ppo_run.parent), "-o", str(video), "--checkpoint", "best",
               "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["frames"] == 1 + sum(result["rewards"])  # CartPole pays 1 a step: the reset's frame and one a step
    reader = imageio.get_reader(str(video))
    try:
        assert reader.count_frames() == result["frames"]
    finally:
        reader.close()


def test_export_policy_refuses_an_sbx_run_in_one_line_naming_the_engine(ppo_run, tmp_path):
    output = tmp_path / "agent.onnx"
    done = cli("export-policy", ppo_run.name, "--runs-dir", str(ppo_run.parent), "--format", "onnx", "-o", str(output),
               "--check")
    assert done.returncode != 0 and not output.exists() and not (tmp_path / "agent.onnx.json").exists()
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert f"run {ppo_run.name} trained with runtime.engine: sbx" in line
    assert "evaluate, watch and record play this run's checkpoints" in line


def test_the_results_name_each_runs_engine_in_the_table_and_its_json(ppo_run, trained_run):
    sb3 = copy_run(trained_run, ppo_run.parent)
    sbx_row, sb3_row = result_row(ppo_run), result_row(sb3)
    assert (sbx_row.engine, sb3_row.engine) == ("sbx", "sb3")
    assert "engine" in [c.key for c in columns_for([sbx_row, sb3_row])]
    assert "engine" not in [c.key for c in columns_for([sb3_row])]  # an SB3-only table stays as it was
    done = cli("export", "--runs-dir", str(ppo_run.parent), "--all", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert {r["run_id"]: r["engine"] for r in json.loads(done.stdout)} == {ppo_run.name: "sbx", sb3.name: "sb3"}
