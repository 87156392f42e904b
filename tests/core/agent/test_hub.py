"""Issue 46, item 4: ``rlpanel hub RUN -o DIR`` writes a Hub model folder whose model loads with SB3's own ``load``
and whose README front matter names stable-baselines3 and the evaluation's mean reward; ``--push`` without a token or
a reachable Hub says so in one line and leaves the folder; bad input is one line each.

Over the session's real trained CartPole run (PPO, 1,024 steps), through the real command line (a child process
that starts the real tool); the VecNormalize case over a run trained here a few hundred steps.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.run.evaluations import read_evaluations
from tests.conftest import REPO
from tests.training_helpers import copy_run, make_run

pytestmark = pytest.mark.training

MODEL = "ppo-CartPole-v1.zip"
EVERY_FILE = ["README.md", "args.yml", "config.yml", "env_kwargs.yml", MODEL, "replay.mp4", "results.json",
              "train_eval_metrics.zip"]


@pytest.fixture(scope="module")
def hub_run(trained_run, tmp_path_factory) -> Path:
    return copy_run(trained_run, tmp_path_factory.mktemp("hub_runs") / "runs")


@pytest.fixture(autouse=True)
def no_hub_login(tmp_path, monkeypatch):
    """No token of the machine's user reaches a test (huggingface_hub reads HF_TOKEN, then HF_HOME's token file)."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))


def hub(run: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``rlpanel --runs-dir RUNS hub RUN ARGS`` as a user types it."""
    return subprocess.run([sys.executable, "-m", "core.cli", "--runs-dir", str(run.parent), "hub", run.name, *args],
                          capture_output=True, text=True, timeout=600, cwd=REPO, env={**os.environ, **(env or {})})


def front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_hub_folder_loads_with_sb3_and_its_card_names_the_evaluation(hub_run, tmp_path):
    from huggingface_hub import metadata_load
    from stable_baselines3 import PPO

    folder = tmp_path / "ppo-cartpole"
    kept_before = len(read_evaluations(hub_run))  # the run is shared by this module's tests (none evaluates step 1,024)
    done = hub(hub_run, "-o", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert sorted(p.name for p in folder.iterdir()) == sorted(EVERY_FILE) == result["files"]
    assert result["checkpoint_step"] == 1024 and result["evaluation"]["made_now"]

    model = PPO.load(folder / MODEL, device="cpu")  # SB3's own load, as huggingface_sb3's users load it
    assert model.num_timesteps == 1024 and model.observation_space.shape == (4,)

    stored = read_evaluations(hub_run)[kept_before:]
    assert len(stored) == 1 and stored[0].checkpoint_step == 1024 and stored[0].episodes == 10  # kept, as evaluate keeps it
    results = json.loads((folder / "results.json").read_text())
    assert results["mean_reward"] == pytest.approx(stored[0].mean_reward) and results["n_eval_episodes"] == 10
    assert results["is_deterministic"] is True and "eval_datetime" in results

    meta = front_matter(folder / "README.md")
    assert meta == metadata_load(folder / "README.md")  # huggingface_hub reads the card as yaml does
    assert meta["library_name"] == "stable-baselines3"
    assert meta["tags"][:2] == ["CartPole-v1", "deep-reinforcement-learning"] and "stable-baselines3" in meta["tags"]
    metric = meta["model-index"][0]["results"][0]["metrics"][0]
    assert metric["type"] == "mean_reward"
    assert metric["value"] == f"{stored[0].mean_reward:.2f} +/- {stored[0].std_reward:.2f}"
    card = (folder / "README.md").read_text(encoding="utf-8")
    for said in ("1,024 timesteps", "10 episodes, deterministic actions", "`n_steps` | `128`", "PPO.load(", "seed: "):
        assert said in card, said
    zoo = yaml.safe_load((folder / "config.yml").read_text())
    assert zoo["n_timesteps"] == 1024 and zoo["policy"] == "MlpPolicy" and zoo["n_steps"] == 128
    assert (folder / "replay.mp4").stat().st_size > 1000

    # again, over the same folder: the stored evaluation is used (none added), the files replaced
    again = hub(hub_run, "-o", str(folder), "--overwrite", "--no-replay")
    assert again.returncode == 0, again.stderr
    assert "a stored evaluation" in again.stdout and len(read_evaluations(hub_run)) == kept_before + 1
    assert not (folder / "replay.mp4").exists(), "no replay of an earlier export beside the model"


def test_a_normalising_run_ships_its_checkpoints_statistics(tmp_path):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from core.agent.hub import main
    from tests.core.agent.test_export import train_in_process

    run = make_run(tmp_path / "runs", {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                                       "runtime": {"n_envs": 1, "seed": 3, "normalize": {"obs": True}}})
    train_in_process(run, 128)
    folder = tmp_path / "hub"
    assert main([str(run), "-o", str(folder), "--episodes", "2", "--no-replay"]) == 0
    saved = next((run / "checkpoints").glob("*_vecnormalize.pkl"))
    assert (folder / "vec_normalize.pkl").read_bytes() == saved.read_bytes()
    import gymnasium as gym

    stats = VecNormalize.load(str(folder / "vec_normalize.pkl"), DummyVecEnv([lambda: gym.make("CartPole-v1")]))
    assert stats.obs_rms.count > 64
    assert "vec_normalize.pkl" in (folder / "README.md").read_text(encoding="utf-8")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_push_without_a_token_or_a_hub_says_so_and_leaves_the_folder(hub_run, tmp_path):
    folder = tmp_path / "pushed"
    step_file = hub_run / "checkpoints" / "step_000000000768.zip"  # --checkpoint FILE: one of the run's own
    no_token = hub(hub_run, "-o", str(folder), "--no-replay", "--episodes", "2", "--checkpoint", str(step_file),
                   "--push", "me/ppo-CartPole-v1")
    assert no_token.returncode == 1
    line = no_token.stderr.strip()
    assert "\n" not in line and "no Hugging Face token" in line and "hf auth login" in line
    assert f"hf upload me/ppo-CartPole-v1 {folder}" in line
    assert (folder / MODEL).read_bytes() == step_file.read_bytes()
    assert "checkpoint at step 768" in (folder / "README.md").read_text(encoding="utf-8")

    port = closed_port()
    unreachable = hub(hub_run, "-o", str(folder), "--overwrite", "--no-replay", "--push", "me/ppo-CartPole-v1",
                      env={"HF_TOKEN": "hf_not_a_real_token", "HF_ENDPOINT": f"http://127.0.0.1:{port}"})
    assert unreachable.returncode == 1
    line = unreachable.stderr.strip()
    assert "\n" not in line and f"could not reach the Hub at http://127.0.0.1:{port}" in line and str(folder) in line
    assert (folder / MODEL).is_file()


@pytest.mark.parametrize("case", ["unknown run", "no best checkpoint", "no such step", "-o a file", "-o full folder",
                                  "bad repo id", "a loose model file"])
def test_bad_input_is_one_line(hub_run, tmp_path, case):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    full = tmp_path / "full"
    full.mkdir()
    (full / "mine.txt").write_text("mine")
    target = str(tmp_path / "out")
    args, said = {
        "unknown run": ((), "no run"),
        "no best checkpoint": (("--checkpoint", "best"), "has no best checkpoint"),
        "no such step": (("--checkpoint", "999"), "keeps no checkpoint at step 999"),
        "-o a file": (("-o", str(a_file)), "this is a file; name a folder"),
        "-o full folder": (("-o", str(full)), "the folder holds files"),
        "bad repo id": (("--push", "just-a-name"), "give the repository as USER/NAME"),
        "a loose model file": (("--checkpoint", str(tmp_path / "model.zip")), "not a checkpoint of run"),
    }[case]
    run = hub_run.with_name("no-such-run") if case == "unknown run" else hub_run
    if "-o" not in args:
        args = (*args, "-o", target)
    done = hub(run, *args)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert not Path(target).exists() and (full / "mine.txt").read_text() == "mine"


def test_an_sbx_runs_best_checkpoint_loads_with_sbx_and_its_card_says_so(sbx_trained_run, tmp_path):
    """The JAX run (PPO CartPole, VecNormalize, a best checkpoint): the model loads with sbx's own ``load``, the
    statistics are the best checkpoint's, the card names sbx."""
    from sbx import PPO as SbxPPO

    run = copy_run(sbx_trained_run, tmp_path / "runs")
    folder = tmp_path / "sbx-hub"
    done = hub(run, "-o", str(folder), "--checkpoint", "best", "--episodes", "2", "--no-replay", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    best = json.loads((run / "checkpoints" / "best.json").read_text())
    assert result["checkpoint_step"] == best["step"] and "vec_normalize.pkl" in result["files"]
    assert (folder / "vec_normalize.pkl").read_bytes() == (run / "checkpoints" / best["vecnormalize"]).read_bytes()
    assert SbxPPO.load(folder / MODEL).num_timesteps == best["step"]
    meta = front_matter(folder / "README.md")
    assert meta["library_name"] == "stable-baselines3" and "sbx" in meta["tags"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "from sbx import PPO" in card and "the best by the run's periodic evaluation" in card


def test_an_env_that_draws_nothing_gives_a_folder_without_replay_and_says_why(trained_run, tmp_path):
    from tests.core.agent.agent_runs import NO_FRAMES_ENTRY, no_frames_copy

    run = no_frames_copy(trained_run, tmp_path / "runs")
    folder = tmp_path / "hub"
    done = hub(run, "-o", str(folder), "--episodes", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "replay.mp4" not in result["files"] and not (folder / "replay.mp4").exists()
    assert any(n.startswith(f"no replay.mp4: {NO_FRAMES_ENTRY} cannot render frames") for n in result["notes"]), result
    assert result["model_file"] == "ppo-NoFramesEnv.zip" and (folder / "ppo-NoFramesEnv.zip").is_file()
