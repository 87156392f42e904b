"""``rlpanel zoo import``: every entry of the rl_zoo3 package's own hyperparameter files becomes a
preset; dropped fields are named with why; bad entries are refused with why and lose nothing."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from core.config.presets import get_preset, list_presets, resolve
from core.util.paths import user_presets_dir
from core.util.yaml_reader import read_yaml_mapping
from core.zoo.envs import missing_env_warning
from core.zoo.importer import REFUSED, WITH_DROPS, import_zoo_file, installed_zoo_file, summary_line
from core.zoo.translate import ZOO_ALGOS
from tests.conftest import REPO
from tests.training_helpers import cli

ZOO_FILES = ["ppo", "a2c", "sac", "dqn", "td3", "ddpg"]


@pytest.mark.parametrize("algo", ZOO_FILES)
def test_every_entry_of_the_installed_zoo_file_imports_as_a_usable_preset(algo):
    path = installed_zoo_file(algo)
    entries = read_yaml_mapping(path)
    results = import_zoo_file(path)
    print(f"{path.name}: {summary_line(results)}")
    assert [r.env for r in results] == list(entries)
    assert [r for r in results if r.status == REFUSED] == []
    for r in results:
        assert r.preset == f"zoo-{algo}-{r.env}".lower().replace("/", "-")
        cfg = resolve(r.preset).config  # a preset the window and `rlpanel train --preset` can use
        assert cfg.algo == algo.upper()
        assert cfg.budget.total_timesteps == int(float(entries[r.env]["n_timesteps"]))
        if r.status == WITH_DROPS:
            assert r.dropped and all(": " in d for d in r.dropped)  # each named, with why


def test_entries_carry_the_zoo_values_into_the_schema():
    import_zoo_file(installed_zoo_file("dqn"), ["CartPole-v1"])
    cfg = resolve("zoo-dqn-cartpole-v1").config
    assert (cfg.env.id, cfg.budget.total_timesteps, cfg.policy.net_arch) == ("CartPole-v1", 50_000, [256, 256])
    assert (cfg.dqn.learning_rate, cfg.dqn.train_freq, cfg.dqn.gradient_steps, cfg.dqn.exploration_final_eps) == \
        (2.3e-3, 256, 128, 0.04)

    import_zoo_file(installed_zoo_file("a2c"), ["atari"])
    atari = get_preset("zoo-a2c-atari")
    cfg = resolve("zoo-a2c-atari", {"env": {"id": "CartPole-v1"}}).config
    assert (cfg.policy.kind, cfg.policy.optimizer, cfg.policy.optimizer_eps) == ("CnnPolicy", "rmsprop_tf_like", 1e-5)
    assert cfg.env.frame_stack == 4
    assert [w.name for w in cfg.env.wrappers] == ["stable_baselines3.common.atari_wrappers.AtariWrapper"]
    assert "id" not in atari.overrides.get("env", {})  # the generic entry names no env

    import_zoo_file(installed_zoo_file("ppo"), ["CarRacing-v3"])
    cfg = resolve("zoo-ppo-carracing-v3").config
    assert (cfg.policy.kind, cfg.policy.activation, cfg.policy.log_std_init, cfg.policy.ortho_init) == \
        ("CnnPolicy", "gelu", -2, False)
    assert (cfg.ppo.learning_rate.start, cfg.ppo.learning_rate.end) == (1e-4, 0.0)
    assert cfg.ppo.use_sde and cfg.ppo.sde_sample_freq == 4
    assert (cfg.runtime.normalize.obs, cfg.runtime.normalize.reward, cfg.env.frame_stack) == (False, True, 2)

    import_zoo_file(installed_zoo_file("sac"), ["FetchReach-v1"])
    cfg = resolve("zoo-sac-fetchreach-v1").config
    assert (cfg.policy.kind, cfg.sac.replay_buffer, cfg.sac.her_n_sampled_goal) == ("MultiInputPolicy", "her", 4)


def test_fields_without_a_counterpart_are_dropped_by_name_and_bad_entries_refused(tmp_path):
    path = tmp_path / "ppo.yml"
    path.write_text(
        "CartPole-v1:\n"
        "  n_timesteps: !!float 2e4\n"
        "  policy: MlpPolicy\n"
        "  n_steps: -5\n"                      # the schema refuses it: dropped with the schema's message
        "  callback: rl_zoo3.callbacks.ParallelTrainCallback\n"
        "  policy_kwargs: \"dict(net_arch=[32], features_extractor_class=MyExtractor, activation_fn=nn.Mish)\"\n"
        "  normalize: \"dict(norm_obs=True, norm_reward=False, epsilon=1e-6)\"\n"
        "  made_up: 3\n"
        "Acrobot-v1:\n"
        "  policy_kwargs: \"dict(net_arch=__import__('os').getcwd())\"\n"
        "Pendulum-v1: 7\n")
    by_env = {r.env: r for r in import_zoo_file(path)}
    cart = by_env["CartPole-v1"]
    assert cart.status == WITH_DROPS
    dropped = {d.split(":")[0]: d for d in cart.dropped}
    assert set(dropped) == {"n_steps", "callback", "policy_kwargs.features_extractor_class", "policy_kwargs.activation_fn",
                            "normalize.epsilon", "made_up"}
    assert "refused by rlpanel" in dropped["n_steps"] and "nn.Mish" in dropped["policy_kwargs.activation_fn"]
    cfg = resolve("zoo-ppo-cartpole-v1").config
    assert cfg.policy.net_arch == [32] and cfg.runtime.normalize.obs and not cfg.runtime.normalize.reward
    assert cfg.budget.total_timesteps == 20_000 and cfg.ppo.n_steps == 2048  # SB3's default where the value was refused
    acrobot = by_env["Acrobot-v1"]
    assert acrobot.status == WITH_DROPS and acrobot.dropped[0].startswith("policy_kwargs: ")
    assert "not plain data" in acrobot.dropped[0]
    assert by_env["Pendulum-v1"].status == REFUSED and "not a mapping" in by_env["Pendulum-v1"].reason
    assert "zoo-ppo-pendulum-v1" not in {p.name for p in list_presets()}


def test_an_existing_preset_is_kept_unless_overwrite_is_asked():
    path = installed_zoo_file("ppo")
    [first] = import_zoo_file(path, ["CartPole-v1"])
    (user_presets_dir() / "zoo-ppo-cartpole-v1.yaml").write_text("algo: PPO\ndescription: mine\n")
    [again] = import_zoo_file(path, ["CartPole-v1"])
    assert again.status == REFUSED and "--overwrite" in again.reason
    assert get_preset("zoo-ppo-cartpole-v1").description == "mine"
    [replaced] = import_zoo_file(path, ["CartPole-v1"], overwrite=True)
    assert replaced.status == first.status and get_preset("zoo-ppo-cartpole-v1").description.startswith("rl_zoo3 ppo.yml")


def test_an_env_not_installed_is_imported_with_the_package_to_install():
    assert missing_env_warning("CartPole-v1") is None and missing_env_warning("atari") is None
    assert "pip install pybullet" in missing_env_warning("HalfCheetahBulletEnv-v0")
    assert "pip install minigrid" in missing_env_warning("MiniGrid-FourRooms-v0")
    assert "no longer makes it" in missing_env_warning("Reacher-v2")
    box2d = missing_env_warning("CarRacing-v3")  # registered by gymnasium whether or not Box2D is installed
    assert (box2d is None) == (importlib.util.find_spec("Box2D") is not None)
    if box2d:
        assert "pip install gymnasium[box2d]" in box2d
    [result] = import_zoo_file(installed_zoo_file("ppo"), ["HalfCheetahBulletEnv-v0"])
    assert result.status != REFUSED and any("pybullet" in w for w in result.warnings)
    assert resolve(result.preset).config.env.id == "HalfCheetahBulletEnv-v0"


def test_cli_import_prints_json_and_refuses_bad_sources():
    done = cli("zoo", "import", "dqn", "--env", "CartPole-v1", "--env", "Acrobot-v1", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["algo"], r["env"], r["preset"], r["status"]) for r in rows] == [
        ("DQN", "CartPole-v1", "zoo-dqn-cartpole-v1", "imported"), ("DQN", "Acrobot-v1", "zoo-dqn-acrobot-v1", "imported")]
    assert all({"dropped", "reason"} <= set(r) for r in rows)
    text = cli("zoo", "import", str(installed_zoo_file("dqn")), "--env", "MountainCar-v0")
    assert text.returncode == 0 and "imported" in text.stdout and "1 entries: 1 imported exactly" in text.stdout
    again = cli("zoo", "import", "dqn", "--env", "MountainCar-v0")
    assert again.returncode == 1 and "--overwrite" in again.stdout
    for args, words in ((("nosuch",), "neither a .yml file nor an algorithm"),
                        (("dqn", "--env", "Nope-v0"), "no entry for Nope-v0"),
                        (("missing.yml",), "missing.yml")):
        bad = cli("zoo", "import", *args)
        assert bad.returncode == 2 and words in bad.stderr, bad.stderr


CONTRIB_FILES = ["tqc", "trpo", "ars", "ppo_lstm", "crossq", "qrdqn"]  # sb3-contrib's, as the rl_zoo3 package ships them


@pytest.mark.parametrize("algo", CONTRIB_FILES)
def test_every_entry_of_an_sb3_contrib_zoo_file_imports_as_a_usable_preset(algo):
    path = installed_zoo_file(algo)
    entries = read_yaml_mapping(path)
    results = import_zoo_file(path)
    print(f"{path.name}: {summary_line(results)}")
    assert [r.env for r in results] == list(entries)
    assert [r for r in results if r.status == REFUSED] == []
    for r in results:
        cfg = resolve(r.preset).config
        assert cfg.algo == ZOO_ALGOS[algo] and cfg.budget.total_timesteps == int(float(entries[r.env]["n_timesteps"]))
        if r.status == WITH_DROPS:
            assert r.dropped and all(": " in d for d in r.dropped)


def test_sb3_contrib_entries_carry_their_own_settings():
    ars = {r.env: r for r in import_zoo_file(installed_zoo_file("ars"))}
    pendulum = resolve(ars["Pendulum-v1"].preset).config  # MlpPolicy with net_arch [16], normalized observations
    assert (pendulum.ars.n_delta, pendulum.ars.n_top, pendulum.policy.net_arch, pendulum.ars.linear_policy) == (4, 1, [16], False)
    assert resolve(ars["CartPole-v1"].preset).config.ars.linear_policy and ars["CartPole-v1"].dropped == []  # LinearPolicy
    lstm = {r.env: r for r in import_zoo_file(installed_zoo_file("ppo_lstm"))}
    cfg = resolve(lstm["CartPoleNoVel-v1"].preset).config
    assert cfg.recurrentppo.lstm_hidden_size == 64 and cfg.recurrentppo.enable_critic_lstm and not cfg.policy.ortho_init
    tqc = {r.env: r for r in import_zoo_file(installed_zoo_file("tqc"))}
    assert resolve(tqc["Hopper-v4"].preset).config.tqc.top_quantiles_to_drop_per_net == 5
    qrdqn = {r.env: r for r in import_zoo_file(installed_zoo_file("qrdqn"))}
    for env, (quantiles, train_freq, lr) in {"CartPole-v1": (10, 256, 2.3e-3), "MountainCar-v0": (25, 16, 4e-3)}.items():
        cfg = resolve(qrdqn[env].preset).config  # policy_kwargs' n_quantiles lands in the qrdqn section
        assert cfg.algo == "QRDQN" and qrdqn[env].dropped == []
        assert (cfg.qrdqn.n_quantiles, cfg.qrdqn.train_freq, cfg.qrdqn.learning_rate) == (quantiles, train_freq, lr)
        assert cfg.policy.net_arch == [256, 256]


def test_a_file_of_an_algorithm_rlpanel_does_not_train_is_refused_whole():
    done = cli("zoo", "import", str(installed_zoo_file("ppo").parent / "her.yml"))
    assert done.returncode == 2 and "cannot tell the algorithm" in done.stderr, done.stderr


BLOCK_CONTRIB = "import sys; sys.modules['sb3_contrib'] = None; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"


def cli_without_contrib(*args: str) -> subprocess.CompletedProcess:
    """rlpanel in a process where sb3_contrib cannot be imported (as if it were not installed)."""
    return subprocess.run([sys.executable, "-c", BLOCK_CONTRIB, *args], capture_output=True, text=True, timeout=240, cwd=REPO)


def test_without_sb3_contrib_its_files_are_refused_with_the_fix():
    done = cli_without_contrib("zoo", "import", "tqc")
    assert done.returncode == 2 and "TQC comes from sb3-contrib" in done.stderr
    assert 'pip install "rlpanel[contrib]"' in done.stderr
    assert cli_without_contrib("zoo", "import", "td3", "--env", "Pendulum-v1").returncode == 0  # SB3's own still import
