"""runtime.engine: sbx refuses, before launch, what SBX cannot run, naming the field and the fix; the table that
decides it is the installed sbx's."""

from __future__ import annotations

import inspect

import pytest

from core.config import engines
from core.config.dotted import set_path
from core.config.engines import FLAX_ACTIVATIONS, OPTAX_OPTIMIZERS, SBX_ALGORITHMS, check_engine, engine_issues
from core.config.errors import ConfigError
from core.config.presets import resolve, save_user_preset
from core.config.schema import ACTIVATIONS, OPTIMIZERS, RunConfig
from core.config.spaces import EnvSpaces, check_spaces
from core.config.validate import parse_set, validate_config

BACK = "or set runtime.engine: sb3"


def issues(raw: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        validate_config({"runtime": {"engine": "sbx"}, **raw})
    return [str(i) for i in err.value.issues]


def test_sb3_is_the_default_and_sbx_takes_the_default_config_of_each_of_its_algorithms():
    assert RunConfig().runtime.engine == "sb3"
    for algo in SBX_ALGORITHMS:
        cfg = validate_config({"algo": algo, "runtime": {"engine": "sbx"}}).config
        assert cfg.runtime.engine == "sbx" and engine_issues(cfg) == []


def test_set_and_a_preset_choose_the_engine():
    path, value = parse_set("runtime.engine=sbx")
    assert validate_config(set_path({"algo": "SAC"}, path, value)).config.runtime.engine == "sbx"
    save_user_preset("fast-sac", {"algo": "SAC", "runtime": {"engine": "sbx"}})
    assert resolve("fast-sac").config.runtime.engine == "sbx"
    with pytest.raises(ConfigError, match="^algo: A2C has no SBX"):  # a preset SBX cannot run is refused when saved
        save_user_preset("fast-a2c", {"algo": "A2C", "runtime": {"engine": "sbx"}})
    with pytest.raises(ConfigError) as err:
        validate_config({"runtime": {"engine": "jax"}})
    assert str(err.value.issues[0]).startswith("runtime.engine: 'jax': Input should be 'sb3' or 'sbx'")


def test_an_algorithm_sbx_lacks_is_named_with_the_ones_it_has():
    assert issues({"algo": "A2C"}) == [
        f"algo: A2C has no SBX (JAX) version; SBX trains PPO, SAC, TD3, DDPG, DQN, TQC or CrossQ: pick one of them, {BACK}"]
    for algo in ("TRPO", "ARS", "RecurrentPPO", "MaskablePPO", "QRDQN"):
        assert issues({"algo": algo})[0].startswith(f"algo: {algo} has no SBX (JAX) version")


def test_a_baseline_plays_without_a_network_so_either_engine_runs_it():
    assert validate_config({"algo": "random", "runtime": {"engine": "sbx"}}).config.runtime.engine == "sbx"


def test_a_hyperparameter_sbx_lacks_or_reads_otherwise_is_refused_only_when_set():
    assert issues({"algo": "SAC", "sac": {"target_update_interval": 2, "optimize_memory_usage": True}}) == [
        f"sac.optimize_memory_usage: SBX's SAC has no optimize_memory_usage: set it back to false, {BACK}",
        f"sac.target_update_interval: SBX's SAC has no target_update_interval: set it back to 1, {BACK}"]
    assert issues({"algo": "PPO", "ppo": {"target_kl": 0.02}}) == [
        "ppo.target_kl: SBX's PPO adapts the learning rate to target_kl instead of stopping the epoch early as SB3 does: "
        f"set it back to empty, {BACK}"]
    assert issues({"algo": "SAC", "sac": {"use_sde": True}}) == [
        "sac.use_sde: SBX's gSDE only reuses one noise sample, it has no state-dependent exploration: set it back to "
        f"false, {BACK}"]
    assert issues({"algo": "DQN", "dqn": {"max_grad_norm": 5}}) == [
        f"dqn.max_grad_norm: SBX's DQN has no max_grad_norm: set it back to 10.0, {BACK}"]
    assert issues({"algo": "CrossQ", "crossq": {"batch_norm_eps": 0.01}}) == [
        f"crossq.batch_norm_eps: SBX's CrossQ has no batch_norm_eps: set it back to 0.001, {BACK}"]
    # what SBX takes passes: TQC's quantiles (its policy's), PPO's schedules, an n-step return
    validate_config({"algo": "TQC", "runtime": {"engine": "sbx"}, "tqc": {"n_quantiles": 10, "n_steps": 3}})
    validate_config({"algo": "PPO", "runtime": {"engine": "sbx"}, "ppo": {"learning_rate": "lin_3e-4", "clip_range": "lin_0.2"}})


def test_a_schedule_sbx_would_hold_still_and_her_are_refused():
    assert issues({"algo": "TD3", "td3": {"learning_rate": "lin_1e-3", "replay_buffer": "her"}}) == [
        f"td3.learning_rate: SBX's TD3 keeps the learning_rate it starts with: set a constant, {BACK}",
        f"td3.replay_buffer: SBX's TD3 trains with the plain replay buffer here, not HER: set it back to default, {BACK}"]


def test_policy_settings_sbx_cannot_build_are_named():
    assert issues({"algo": "PPO", "policy": {"features_extractor": "nets:Graph", "class": "nets:Policy"}}) == [
        "policy.features_extractor: your own network is a torch module and SBX builds its networks in JAX (flax): clear "
        f"policy.features_extractor, {BACK}",
        f"policy.class: your own network is a torch module and SBX builds its networks in JAX (flax): clear policy.class, {BACK}"]
    assert issues({"algo": "TD3", "policy": {"kind": "CnnPolicy"}}) == [
        f"policy.kind: SBX's TD3 has MlpPolicy or MultiInputPolicy, not CnnPolicy: use auto or MlpPolicy, {BACK}"]
    assert issues({"algo": "PPO", "policy": {"full_std": False}}) == [
        f"policy.full_std: SBX's PPO policy does not take full_std: set it back to true, {BACK}"]
    assert issues({"algo": "TD3", "policy": {"log_std_init": -1}}) == [
        f"policy.log_std_init: SBX's TD3 policy does not take log_std_init: set it back to empty, {BACK}"]
    assert issues({"algo": "PPO", "policy": {"optimizer": "rmsprop_tf_like"}}) == [
        f"policy.optimizer: rmsprop_tf_like has no optax version for SBX: use adam, adamw, rmsprop, sgd or auto, {BACK}"]
    assert issues({"algo": "SAC", "policy": {"weight_decay": 0.01}}) == [
        f"policy.weight_decay: optax's adam has no weight_decay: set policy.optimizer: adamw, {BACK}"]
    assert issues({"algo": "DQN", "policy": {"optimizer": "sgd", "optimizer_eps": 1e-5}}) == [
        f"policy.optimizer_eps: optax's sgd has no eps: use adam, adamw or rmsprop, {BACK}"]
    ok = {"net_arch": [32, 32], "activation": "gelu", "optimizer": "adamw", "weight_decay": 0.01, "optimizer_eps": 1e-6,
          "log_std_init": -1.0, "ortho_init": False, "n_critics": 3}
    validate_config({"algo": "SAC", "runtime": {"engine": "sbx"}, "policy": {k: v for k, v in ok.items() if k != "ortho_init"}})
    validate_config({"algo": "PPO", "runtime": {"engine": "sbx"}, "policy": {k: v for k, v in ok.items() if k != "n_critics"}})


def test_the_same_settings_on_sb3_pass():
    validate_config({"algo": "PPO", "ppo": {"target_kl": 0.02}, "policy": {"full_std": False, "optimizer": "rmsprop_tf_like"}})
    validate_config({"algo": "A2C"})


def test_at_launch_a_missing_sbx_gives_the_install_line_not_a_traceback(monkeypatch):
    cfg = validate_config({"algo": "SAC", "env": {"id": "Pendulum-v1"}, "runtime": {"engine": "sbx"}}).config
    monkeypatch.setattr(engines, "installed", lambda module: module != "sbx")
    assert [str(i) for i in check_spaces(cfg, "box")] == [
        'runtime.engine: engine sbx needs the sbx-rl package (JAX), which is not installed here: pip install "rlpanel[jax]", '
        f"{BACK}"]


def test_sbxs_tqc_and_crossq_need_no_sb3_contrib(monkeypatch):
    monkeypatch.setattr("core.config.algorithms.contrib.contrib_installed", lambda: False)
    on_sbx = validate_config({"algo": "TQC", "env": {"id": "Pendulum-v1"}, "runtime": {"engine": "sbx"}}).config
    assert check_spaces(on_sbx, "box") == []
    on_sb3 = on_sbx.model_copy(update={"runtime": on_sbx.runtime.model_copy(update={"engine": "sb3"})})
    assert [i.path for i in check_spaces(on_sb3, "box")] == ["algo"]


def test_auto_policy_on_images_or_dicts_is_checked_against_sbxs_kinds():
    sac = validate_config({"algo": "SAC", "env": {"id": "Pendulum-v1"}, "runtime": {"engine": "sbx"}}).config
    assert [str(i) for i in check_engine(sac, obs_image=True)] == [
        "policy.kind: Pendulum-v1 has image observations, which call for CnnPolicy, and SBX's SAC has MlpPolicy, SimbaPolicy "
        "or MultiInputPolicy only: set runtime.engine: sb3"]
    assert check_engine(sac, obs_dict=True) == []
    ppo = validate_config({"algo": "PPO", "runtime": {"engine": "sbx"}}).config
    image = EnvSpaces(obs_shape=(84, 84, 3), obs_dtype="uint8", action_kind="discrete", action_shape=(), action_dtype="int64",
                      n_actions=4, obs_image=True)
    assert check_spaces(ppo, "discrete", image) == []
    dicts = EnvSpaces(obs_shape=(4,), obs_dtype="float32", action_kind="discrete", action_shape=(), action_dtype="int64",
                      n_actions=2, obs_kind="dict", obs_keys=("a",))
    assert [i.path for i in check_spaces(ppo, "discrete", dicts)] == ["policy.kind"]


def test_every_activation_and_optimizer_name_has_its_jax_twin_or_a_refusal():
    flax_nn = pytest.importorskip("flax.linen")
    optax = pytest.importorskip("optax")
    assert set(FLAX_ACTIVATIONS) == set(ACTIVATIONS) - {"auto"}
    assert all(callable(getattr(flax_nn, name)) for name in FLAX_ACTIVATIONS.values())
    assert set(OPTAX_OPTIMIZERS) | {"rmsprop_tf_like"} == set(OPTIMIZERS) - {"auto"}
    for name, optax_name in OPTAX_OPTIMIZERS.items():
        params = inspect.signature(getattr(optax, optax_name)).parameters
        for key, takers in engines.OPTAX_TAKES.items():
            assert (key in params) == (name in takers), (name, key)


def test_the_table_is_the_installed_sbxs():
    """A new sbx whose classes take other arguments, policies or policy options fails here, not in a user's night."""
    sbx = pytest.importorskip("sbx")
    skip = {"self", "policy", "env", "_init_setup_model", "observation_space", "action_space", "lr_schedule"}
    for name, table in SBX_ALGORITHMS.items():
        cls = getattr(sbx, name)
        assert table.cls == f"sbx:{name}"
        assert table.kwargs == set(inspect.signature(cls.__init__).parameters) - skip, name
        assert table.policy_kinds == tuple(cls.policy_aliases), name
        mlp = cls.policy_aliases["MlpPolicy"]
        assert table.policy_kwargs == set(inspect.signature(mlp.__init__).parameters) - skip, name
        if table.critic_lr:  # its critic's default rate is not learning_rate: the factory passes it
            assert inspect.signature(cls.__init__).parameters["qf_learning_rate"].default is not None
