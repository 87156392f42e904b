"""The fit estimate against real stable-baselines3 objects, its verdicts, its fixes and its CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.config.dotted import set_path
from core.config.errors import ConfigError
from core.config.presets import list_presets, resolve
from core.config.schema import EnvSpec
from core.config.spaces import probe_spaces
from core.config.trust import code_modules, trust
from core.config.validate import validate_config
from core.estimate.buffers import replay_buffer_bytes, rollout_buffer_bytes
from core.estimate.estimate import estimate
from core.estimate.families.registry import model_shape
from core.estimate.gpus import GpuProfile, get_profile
from core.estimate.result import FITS, NO_FIT, TIGHT, verdict_for

GIB = 1 << 30
HOST = 64 * GIB  # a fixed host so verdicts do not depend on the machine running the tests


def env_for(algo: str) -> str:
    return "Pendulum-v1" if algo in ("SAC", "TD3", "DDPG") else "CartPole-v1"


BUILTIN_CASES = [(p.name, algo) for p in list_presets()
                 if p.builtin and not code_modules(p.data) for algo in p.algos]  # own code: test_measured_network


def preset_config(preset: str | None, algo: str, **overrides):
    raw = {"algo": algo, "env": {"id": env_for(algo)}, "runtime": {"device": "cpu"}}
    for path, value in overrides.items():
        raw = set_path(raw, path.replace("__", "."), value)
    return resolve(preset, raw).config


def build(cfg):
    """The real SB3 model, built the way the worker builds it, on CPU with in-process envs."""
    from core.worker.factory import build_model, build_vec_env

    env, _ = build_vec_env(cfg, force_dummy=True)
    return build_model(cfg, env, device="cpu")


def real_param_count(model) -> int:
    count = sum(p.numel() for p in model.policy.parameters())
    if getattr(model, "log_ent_coef", None) is not None:
        count += model.log_ent_coef.numel()
    return count


def optimizers(model) -> list:
    if hasattr(model, "actor") and hasattr(model, "critic"):  # SAC, TD3, DDPG
        return [o for o in (model.actor.optimizer, model.critic.optimizer, getattr(model, "ent_coef_optimizer", None))
                if o is not None]
    return [model.policy.optimizer]


def step_every_optimizer(model) -> None:
    """One update of every optimizer the algorithm holds, with a gradient on every parameter it steps."""
    for opt in optimizers(model):
        params = [p for group in opt.param_groups for p in group["params"]]
        opt.zero_grad()
        sum((p * 1.0).sum() for p in params).backward()
        opt.step()


def optimizer_state_bytes(model) -> int:
    total = 0
    for opt in optimizers(model):
        for state in opt.state.values():
            total += sum(v.numel() * v.element_size() for v in state.values() if hasattr(v, "numel"))
    return total


def buffer_arrays_bytes(model) -> int:
    buf = getattr(model, "rollout_buffer", None) or model.replay_buffer
    names = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts",
             "returns", "episode_starts", "values", "log_probs", "advantages")
    return sum(getattr(buf, n).nbytes for n in names if isinstance(getattr(buf, n, None), np.ndarray))


def estimate_of(cfg, gpu=None):
    return estimate(cfg, probe_spaces(cfg.env), gpu, HOST)


# --- parameters, optimizer state, buffers: equal to SB3's own -------------------------------------

def _check_against_sb3(cfg) -> None:
    model = build(cfg)
    try:
        spaces = probe_spaces(cfg.env)
        shape = model_shape(cfg, spaces)
        result = estimate(cfg, spaces, None, HOST)
        assert result.parameter_count == shape.param_count == real_param_count(model)
        assert result.term("parameters").bytes == 4 * real_param_count(model)
        step_every_optimizer(model)
        assert result.term("optimizer").bytes == optimizer_state_bytes(model)
        real = buffer_arrays_bytes(model)
        name = "rollout_buffer" if cfg.spec.on_policy else "replay_buffer"
        assert abs(result.term(name).bytes - real) <= 0.01 * real, (result.term(name).bytes, real)
    finally:
        model.env.close()


@pytest.mark.parametrize(("preset", "algo"), BUILTIN_CASES, ids=[f"{p}-{a}" for p, a in BUILTIN_CASES])
def test_builtin_preset_matches_sb3(preset, algo):
    """Every built-in preset and algorithm it covers: parameters, optimizer state and buffer bytes."""
    _check_against_sb3(preset_config(preset, algo))


VARIANTS = {
    "ppo-box-actions": ("PPO", {"env__id": "Pendulum-v1", "policy__net_arch": {"pi": [32], "vf": [64, 16]}}),
    "ppo-discrete-obs": ("PPO", {"env__id": "FrozenLake-v1", "ppo__n_steps": 64, "runtime__n_envs": 2}),
    "a2c-adam": ("A2C", {"a2c__use_rms_prop": False, "policy__activation": "gelu"}),
    "a2c-box-actions": ("A2C", {"env__id": "MountainCarContinuous-v0", "runtime__n_envs": 4}),
    "sac-sde": ("SAC", {"sac__use_sde": True, "sac__buffer_size": 5000, "policy__net_arch": [64, 32]}),
    "sac-fixed-ent-coef": ("SAC", {"sac__ent_coef": 0.1, "sac__buffer_size": 5000,
                                   "policy__net_arch": {"pi": [16], "qf": [32, 32]}}),
    "sac-optimize-memory-4-envs": ("SAC", {"sac__optimize_memory_usage": True, "sac__buffer_size": 10_001,
                                           "runtime__n_envs": 4}),
    "dqn-default": ("DQN", {"dqn__buffer_size": 50_000, "env__id": "Acrobot-v1"}),
    "dqn-3-envs": ("DQN", {"dqn__buffer_size": 10_000, "runtime__n_envs": 3, "policy__net_arch": [128]}),
    "ppo-sde-full-std": ("PPO", {"env__id": "Pendulum-v1", "ppo__use_sde": True, "policy__net_arch": [32, 16]}),
    "a2c-sde-diagonal-std": ("A2C", {"env__id": "Pendulum-v1", "a2c__use_sde": True, "policy__full_std": False}),
    "ppo-adamw-eps": ("PPO", {"policy__optimizer": "adamw", "policy__optimizer_eps": 1e-5, "policy__weight_decay": 0.01}),
    "a2c-rmsprop-tf-like": ("A2C", {"policy__optimizer": "rmsprop_tf_like", "policy__optimizer_eps": 1e-5}),
    "dqn-sgd": ("DQN", {"dqn__buffer_size": 5000, "policy__optimizer": "sgd"}),
    "sac-one-critic": ("SAC", {"sac__buffer_size": 5000, "policy__n_critics": 1, "policy__net_arch": [64]}),
    "td3-default": ("TD3", {"td3__buffer_size": 5000}),
    "td3-three-critics-dict-net": ("TD3", {"td3__buffer_size": 5000, "policy__n_critics": 3,
                                           "policy__net_arch": {"pi": [32], "qf": [64, 64]}}),
    "ddpg-default": ("DDPG", {"ddpg__buffer_size": 5000, "runtime__n_envs": 2}),
    "ppo-frame-stack": ("PPO", {"env__id": "Pendulum-v1", "env__frame_stack": 4, "ppo__n_steps": 64}),
    "sac-time-limit-wrapper": ("SAC", {"sac__buffer_size": 3000, "env__wrappers": [{"TimeLimit": {"max_episode_steps": 50}}]}),
}

IMAGE_ENV = "tests.core.estimate.image_envs:TinyImageEnv"
CNN_VARIANTS = {
    "ppo-cnn-shared": ("PPO", {"ppo__n_steps": 32, "ppo__batch_size": 32}, {}),
    "ppo-cnn-separate-channels-first": ("PPO", {"ppo__n_steps": 32, "ppo__batch_size": 16,
                                                "policy__share_features_extractor": False},
                                        {"channels_first": True}),
    "a2c-cnn-frame-stack": ("A2C", {"env__frame_stack": 2, "policy__net_arch": [64]}, {"channels": 1}),
    "dqn-cnn": ("DQN", {"dqn__buffer_size": 500}, {}),
    "sac-cnn": ("SAC", {"sac__buffer_size": 500}, {"continuous": True}),
    "td3-cnn-shared": ("TD3", {"td3__buffer_size": 500, "policy__share_features_extractor": True}, {"continuous": True}),
}


@pytest.mark.parametrize("variant", list(CNN_VARIANTS))
def test_cnn_policies_match_sb3(variant):
    """Image observations: the NatureCNN in each network that owns one, image replay and rollout buffers (uint8)."""
    algo, overrides, kwargs = CNN_VARIANTS[variant]
    trust(IMAGE_ENV.partition(":")[0])  # an entry point is user code: its spaces are read once it is trusted
    cfg = preset_config(None, algo, env={"id": None, "entry_point": IMAGE_ENV, "kwargs": kwargs}, **overrides)
    shape = model_shape(cfg, probe_spaces(cfg.env))
    assert shape.cnn is not None
    _check_against_sb3(cfg)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_variants_match_sb3(variant):
    """Box and Discrete spaces, gSDE, fixed ent_coef, optimize_memory_usage, RMSprop/Adam, dict nets."""
    algo, overrides = VARIANTS[variant]
    _check_against_sb3(preset_config(None, algo, **overrides))


@pytest.mark.parametrize("algo", ["PPO", "A2C", "SAC", "DQN"])
def test_optimizer_state_after_a_real_update(algo):
    """After SB3's own train step (not a synthetic one), the optimizer state is what the estimate says."""
    overrides = {"budget__total_timesteps": 400, "policy__net_arch": [32, 32]}
    if algo == "PPO":
        overrides.update(ppo__n_steps=64, ppo__batch_size=32, ppo__n_epochs=1)
    elif algo == "A2C":
        overrides.update(a2c__n_steps=8)
    else:
        key = algo.lower()
        overrides.update({f"{key}__buffer_size": 1000, f"{key}__learning_starts": 50, f"{key}__batch_size": 32,
                          f"{key}__train_freq": 1})
    cfg = preset_config(None, algo, **overrides)
    model = build(cfg)
    try:
        model.learn(200)
        assert estimate_of(cfg).term("optimizer").bytes == optimizer_state_bytes(model)
    finally:
        model.env.close()


def test_full_size_replay_buffer_of_a_million_pendulum_transitions():
    """A real 1M-transition SAC replay buffer (numpy allocates lazily, so this is cheap)."""
    cfg = preset_config("laptop-8gb", "SAC")
    assert cfg.sac.buffer_size == 1_000_000
    model = build(cfg)
    try:
        real = buffer_arrays_bytes(model)
        result = estimate_of(cfg)
        assert abs(result.term("replay_buffer").bytes - real) <= 0.01 * real
        assert result.buffer_full_at_step == 1_000_000
        assert any("step 1,000,000" in n for n in result.notes)
    finally:
        model.env.close()


def test_buffer_arithmetic_follows_sb3_rules():
    spaces = probe_spaces(EnvSpec(id="Pendulum-v1"))
    # buffer_size is divided by n_envs (rounded down) and optimize_memory_usage drops next_observations
    assert replay_buffer_bytes(1000, 3, spaces, False) == 333 * 3 * (2 * 3 * 4 + 4 + 3 * 4)
    assert replay_buffer_bytes(1000, 1, spaces, True) == 1000 * (3 * 4 + 4 + 3 * 4)
    cart = probe_spaces(EnvSpec(id="CartPole-v1"))  # int64 actions, float32 obs, six float32 columns
    assert rollout_buffer_bytes(10, 2, cart) == 20 * (16 + 8 + 24)


# --- verdicts and fixes -------------------------------------------------------------------------

def test_verdict_boundaries():
    assert verdict_for(79, 100) == FITS
    assert verdict_for(80, 100) == TIGHT
    assert verdict_for(95, 100) == TIGHT
    assert verdict_for(96, 100) == NO_FIT


def _gpu(memory_bytes: int) -> GpuProfile:
    base = get_profile("RTX 4060 Laptop")
    return GpuProfile("test card", memory_bytes, base.compute_capability, base.tf32, base.generation,
                      base.context_bytes, base.workspace_bytes)


@pytest.mark.parametrize(("percent", "verdict"), [(79, FITS), (80, TIGHT), (95, TIGHT), (96, NO_FIT)])
def test_verdict_boundaries_through_estimate(percent, verdict):
    cfg = preset_config("fast", "PPO", runtime__device="auto")
    used = estimate_of(cfg, _gpu(8 * GIB)).gpu_bytes  # GPU bytes do not depend on the capacity
    capacity = -(-used * 100 // percent) if percent in (79, 95) else used * 100 // percent
    result = estimate_of(cfg, _gpu(capacity))
    assert result.gpu_bytes == used
    assert result.verdict == verdict
    assert (result.suggestion is None) == (verdict == FITS)


NOT_FITTING = {
    "ppo-huge-net": ("beast", "PPO", {"policy__net_arch": [16384, 16384, 16384]}),
    "ppo-huge-batch": (None, "PPO", {"ppo__n_steps": 4096, "runtime__n_envs": 64, "ppo__batch_size": 262144,
                                     "policy__net_arch": [2048, 2048]}),
    "a2c-huge-rollout": (None, "A2C", {"a2c__n_steps": 4096, "runtime__n_envs": 512, "policy__net_arch": [2048, 2048]}),
    "sac-huge-batch": (None, "SAC", {"sac__batch_size": 1_000_000, "sac__buffer_size": 2_000_000,
                                     "policy__net_arch": [1024, 1024]}),
    "dqn-huge-replay": (None, "DQN", {"dqn__buffer_size": 2_000_000_000 // 2}),
    "too-many-subprocess-envs": ("beast", "PPO", {"runtime__n_envs": 1024, "runtime__vec_env": "subproc-sb3"}),
    "too-many-lean-spawned-envs": ("beast", "PPO", {"runtime__n_envs": 1024, "runtime__start_method": "spawn"}),
}


@pytest.mark.parametrize("case", list(NOT_FITTING))
def test_suggestion_fits_when_applied(case):
    preset, algo, overrides = NOT_FITTING[case]
    cfg = preset_config(preset, algo, runtime__device="auto", **overrides)
    gpu = get_profile("RTX 4060 Laptop")
    result = estimate(cfg, probe_spaces(cfg.env), gpu, 16 * GIB)
    assert NO_FIT in (result.verdict, result.host_verdict)
    s = result.suggestion
    assert s is not None and s.path and s.old != s.new
    assert f"{s.old:,}" in s.text if isinstance(s.old, int) else str(s.path.rsplit(".")[-1]) in s.text
    fixed = validate_config(set_path(cfg.model_dump(mode="json"), s.path, s.new)).config
    again = estimate(fixed, probe_spaces(fixed.env), gpu if fixed.runtime.device != "cpu" else None, 16 * GIB)
    assert again.verdict == FITS and again.host_verdict == FITS
    assert again.suggestion is None
    assert result.to_json()["suggestion"]["path"] == s.path


def test_cpu_run_puts_everything_on_the_host():
    cfg = preset_config("fast", "PPO", runtime__device="cpu")
    result = estimate_of(cfg, get_profile("RTX 4090"))
    assert not result.on_gpu and result.gpu_bytes == 0 and result.gpu_name is None
    assert {t.where for t in result.terms} == {"host"}
    assert result.capacity_bytes == HOST
    assert result.term("cuda_context") is None


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_env_processes_are_counted_for_the_vec_env_chosen(method):
    terms = {vec: estimate_of(preset_config(None, "PPO", runtime__n_envs=16, runtime__vec_env=vec,
                                            runtime__start_method=method), None).term("env_processes")
             for vec in ("dummy", "subproc", "subproc-sb3")}
    assert terms["dummy"] is None
    lean, sb3 = terms["subproc"], terms["subproc-sb3"]
    assert lean.where == sb3.where == "host"
    assert 0 < lean.bytes * 4 <= sb3.bytes  # bench/env_memory.py's measured figures, per env process
    assert lean.note.startswith(f"16 subproc env processes ({method}) of ~")
    assert sb3.bytes >= 16 * 150 * (1 << 20)


def test_json_shape():
    cfg = preset_config("laptop-8gb", "SAC", runtime__device="auto")
    data = estimate_of(cfg, get_profile("RTX 4060 Laptop")).to_json()
    assert data["verdict"] in (FITS, TIGHT, NO_FIT)
    for key in ("capacity_bytes", "gpu_bytes", "host_bytes", "terms", "suggestion", "gpu_name", "host_verdict", "notes"):
        assert key in data
    names = {t["name"] for t in data["terms"]}
    assert {"parameters", "gradients", "optimizer", "activations", "cuda_context", "replay_buffer"} <= names
    assert all(t["where"] in ("gpu", "host") for t in data["terms"])
    assert next(t for t in data["terms"] if t["name"] == "replay_buffer")["where"] == "host"
    assert data["gpu_bytes"] == sum(t["bytes"] for t in data["terms"] if t["where"] == "gpu")
    json.dumps(data)


def test_estimate_is_fast():
    import time

    cfg = preset_config("beast", "PPO", runtime__device="auto")
    spaces, gpu = probe_spaces(cfg.env), get_profile("RTX 4060 Laptop")
    estimate(cfg, spaces, gpu, HOST)
    times = []
    for _ in range(50):
        t = time.perf_counter()
        estimate(cfg, spaces, gpu, HOST)
        times.append(time.perf_counter() - t)
    assert sorted(times)[len(times) // 2] < 0.005


# --- bad input ----------------------------------------------------------------------------------

def test_unknown_gpu_lists_the_known_names():
    with pytest.raises(ConfigError) as err:
        get_profile("RTX 9999")
    assert err.value.issues[0].path == "target_gpu"
    assert "RTX 9999" in str(err.value) and "RTX 4060 Laptop" in str(err.value) and "H100 80GB" in str(err.value)


def test_gpu_names_are_case_insensitive():
    assert get_profile("rtx 4060 laptop").name == "RTX 4060 Laptop"
    assert get_profile("a100-80gb").name == "A100 80GB"


def test_env_that_cannot_be_created():
    with pytest.raises(ConfigError) as err:
        probe_spaces(EnvSpec(id="NoSuchEnv-v0"))
    assert err.value.issues[0].path == "env.id"
    assert "NoSuchEnv-v0" in str(err.value) and "check the spelling" in str(err.value)


def test_wrong_algorithm_for_the_action_space():
    cfg = preset_config(None, "SAC", env__id="CartPole-v1")
    with pytest.raises(ConfigError, match="SAC needs a continuous"):
        estimate_of(cfg)
