"""``rlpanel zoo export``: a config as an rl_zoo3 entry; importing it gives the same config back, and
rl_zoo3's own training entry point loads it and trains with it."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from core.config.presets import list_presets, resolve
from core.config.validate import validate_config
from core.zoo.export import export_entry, export_yaml, zoo_algo_name
from core.zoo.importer import import_zoo_file, installed_zoo_file
from core.zoo.translate import translate_entry, validated_translation
from tests.training_helpers import cli, make_run

RICH = {
    "PPO": {"algo": "PPO", "env": {"id": "Pendulum-v1", "wrappers": [{"TimeLimit": {"max_episode_steps": 50}}]},
            "budget": {"total_timesteps": 5000},
            "runtime": {"n_envs": 2, "normalize": {"obs": True, "reward": False, "clip_obs": 5.0}},
            "ppo": {"learning_rate": "lin_3e-4", "clip_range": "lin_0.2", "n_steps": 64, "batch_size": 64, "n_epochs": 2,
                    "use_sde": True, "sde_sample_freq": 4, "gamma": 0.95},
            "policy": {"net_arch": {"pi": [32], "vf": [48]}, "activation": "relu", "log_std_init": -1.5,
                       "ortho_init": False, "optimizer": "adamw", "optimizer_eps": 1e-6}},
    "TD3": {"algo": "TD3", "env": {"id": "Pendulum-v1"}, "budget": {"total_timesteps": 5000},
            "td3": {"learning_starts": 100, "batch_size": 32, "buffer_size": 5000, "train_freq": 1, "train_freq_unit": "episode",
                    "action_noise": "normal", "action_noise_std": 0.2, "policy_delay": 3},
            "policy": {"net_arch": [24, 24], "n_critics": 1}},
}


def round_trip(cfg):
    text, notes = export_yaml(cfg, cfg.env.id or "CartPole-v1")
    [(env, entry)] = yaml.safe_load(text).items()
    translated, problem = validated_translation(translate_entry(zoo_algo_name(cfg.algo), env, entry))
    assert problem is None and translated.dropped == [], (text, problem, translated.dropped)
    back = validate_config(translated.raw).config.model_dump(mode="json")
    if not cfg.env.id:
        back["env"]["id"] = None
    return back, notes


def test_import_of_export_gives_every_zoo_entry_back():
    for algo in ("ppo", "a2c", "sac", "dqn", "td3", "ddpg"):
        import_zoo_file(installed_zoo_file(algo))
    presets = [p.name for p in list_presets() if p.name.startswith("zoo-")]
    assert len(presets) > 100
    for name in presets:
        cfg = resolve(name).config
        back, _ = round_trip(cfg)
        assert back == cfg.model_dump(mode="json"), name


def test_import_of_export_gives_every_sb3_contrib_zoo_entry_back():
    for algo in ("tqc", "trpo", "ars", "ppo_lstm", "crossq"):
        import_zoo_file(installed_zoo_file(algo))
    presets = [p.name for p in list_presets() if p.name.startswith("zoo-")]
    assert len(presets) > 100
    for name in presets:
        cfg = resolve(name).config
        back, _ = round_trip(cfg)
        want = cfg.model_dump(mode="json")
        if name == "zoo-ppo_lstm-default":  # it names MlpPolicy, which RecurrentPPO lacks (dropped): kind auto,
            want["policy"]["kind"] = "MlpPolicy"  # written as what auto picks for the env (ARS's LinearPolicy stays auto)
        assert back == want, name


@pytest.mark.parametrize("algo", list(RICH))
def test_import_of_export_gives_the_config_back(algo):
    cfg = validate_config(RICH[algo]).config
    back, notes = round_trip(cfg)
    want = cfg.model_dump(mode="json")
    assert want["policy"]["kind"] == "auto"
    want["policy"]["kind"] = "MlpPolicy"  # the zoo names its policy: auto is written as what it picks for the env
    assert back == want and notes == []


def test_what_an_entry_cannot_say_is_a_note():
    cfg = validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"},
                           "ppo": {"learning_rate": {"schedule": "linear", "start": 1e-3, "end": 1e-4}},
                           "runtime": {"normalize": {"obs": True, "gamma": 0.9}}}).config
    entry, notes = export_entry(cfg)
    assert entry["learning_rate"] == "lin_0.001"
    assert any("learning_rate" in n and "0.0001" in n for n in notes)
    assert any("normalize.gamma" in n for n in notes)
    with pytest.raises(ValueError, match="--env"):
        export_yaml(validate_config({"algo": "PPO", "env": {"entry_point": "gymnasium.envs.classic_control:CartPoleEnv"}}).config)


def test_cli_exports_a_preset_and_a_run(runs_dir, tmp_path):
    import_zoo_file(installed_zoo_file("dqn"), ["CartPole-v1"])
    out = tmp_path / "new" / "dqn.yml"
    done = cli("zoo", "export", "zoo-dqn-cartpole-v1", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(out.read_text())["CartPole-v1"]["policy_kwargs"] == "dict(net_arch=[256, 256])"
    run = make_run(runs_dir, RICH["TD3"])
    done = cli("zoo", "export", run.name, "--env", "MountainCarContinuous-v0", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    entry = yaml.safe_load(done.stdout)["MountainCarContinuous-v0"]
    assert (entry["train_freq"], entry["noise_type"], entry["policy_kwargs"]) == \
        ([1, "episode"], "normal", "dict(net_arch=[24, 24], n_critics=1)")
    bad = cli("zoo", "export", "no-such-thing", "--runs-dir", str(runs_dir))
    assert bad.returncode == 2 and "neither a preset nor a run id" in bad.stderr


@pytest.mark.training
@pytest.mark.parametrize("algo", list(RICH))
def test_rl_zoo3_trains_with_the_exported_entry(algo, tmp_path):
    cfg = validate_config(RICH[algo]).config
    path = tmp_path / f"{algo.lower()}.yml"
    path.write_text(export_yaml(cfg)[0])
    logs = tmp_path / "logs"
    done = subprocess.run([sys.executable, "-m", "rl_zoo3.train", "--algo", algo.lower(), "--env", "Pendulum-v1",
                           "-conf", str(path), "-n", "300", "--log-folder", str(logs), "--eval-freq", "-1",
                           "--save-freq", "-1", "--seed", "1", "--device", "cpu"],
                          capture_output=True, text=True, timeout=400, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [saved] = (logs / algo.lower()).glob("Pendulum-v1_*/Pendulum-v1.zip")
    import stable_baselines3

    model = getattr(stable_baselines3, algo).load(str(saved), device="cpu")
    if algo == "PPO":
        assert model.use_sde and model.sde_sample_freq == 4 and model.n_steps == 64 and model.n_envs == 2
        assert model.lr_schedule(1.0) == pytest.approx(3e-4) and model.lr_schedule(0.5) == pytest.approx(1.5e-4)
        kwargs = model.policy_kwargs
        assert kwargs["net_arch"] == {"pi": [32], "vf": [48]} and kwargs["activation_fn"].__name__ == "ReLU"
        assert kwargs["log_std_init"] == -1.5 and kwargs["ortho_init"] is False
        assert kwargs["optimizer_class"].__name__ == "AdamW" and kwargs["optimizer_kwargs"] == {"eps": 1e-6}
        import pickle

        [stats] = saved.parent.glob("Pendulum-v1/vecnormalize.pkl")
        norm = pickle.loads(stats.read_bytes())
        assert norm.norm_obs and not norm.norm_reward and norm.clip_obs == 5.0 and norm.gamma == 0.95
    else:
        assert (model.train_freq.frequency, model.train_freq.unit.value) == (1, "episode")
        assert type(model.action_noise).__name__ == "NormalActionNoise" and model.policy_delay == 3
        assert model.policy_kwargs["n_critics"] == 1 and model.policy_kwargs["net_arch"] == [24, 24]
