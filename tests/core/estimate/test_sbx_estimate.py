"""The fit estimate of an SBX (JAX) run: the model built for real in a child process and counted, XLA's GPU terms,
JAX's device (Windows and a CPU-only jax injected), and a card's history kept apart by engine.

No GPU here: the measurement runs on JAX's CPU device; the GPU side (XLA's bytes in use, a preallocated pool) is
driven by a measurement kept as the worker keeps its own (``measured.remember``) and by the environment.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from core.config.presets import resolve
from core.config.spaces import probe_spaces
from core.estimate import measured
from core.estimate.device import device_issue
from core.estimate.estimate import estimate
from core.estimate.gpus import get_profile
from core.estimate.measured import SBX_SOURCE, MeasuredNetwork, measure_network, network_key
from core.estimate.networks import FLOAT
from core.estimate.xla import GROWS_TEXT, preallocated_fraction, set_jax_env
from core.run.card_history import card_ratios
from core.run.layout import RunDir
from core.run.status import write_status
from core.run.summary import summarize
from core.util.files import read_json, write_json_atomic
from tests.conftest import REPO

HOST = 64 << 30
MIB = 1 << 20
UUID = "GPU-fa4e0000-0000-4000-8000-000000000000"
CPU_JAX = {"jax": "0.10.2", "backend": "cpu", "cuda_available": False, "devices": []}
CUDA_JAX = {"jax": "0.10.2", "backend": "gpu", "cuda_available": True, "devices": [{"index": 0, "name": "H100"}]}
CLI = "import sys; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"
WINDOWS = "trains on the CPU: JAX has no CUDA on Windows; WSL2 is the way to the GPU"


def config(algo="SAC", env="Pendulum-v1", device="auto", **section):
    raw = {"algo": algo, "env": {"id": env}, "runtime": {"engine": "sbx", "device": device}}
    if section:
        raw[algo.lower()] = section
    return resolve(None, raw).config


def sb3(cfg):
    return cfg.model_copy(update={"runtime": cfg.runtime.model_copy(update={"engine": "sb3"})})


@pytest.fixture(scope="module")
def sac_measured():
    """SAC Pendulum's SBX model, built and counted once by the child process (jax's first import: seconds)."""
    return measure_network(config(), use_cache=False)


def test_the_sbx_model_is_built_and_counted_as_sb3s_formulas_count_the_same_networks(sac_measured):
    cfg = config()
    formula = estimate(sb3(cfg), probe_spaces(cfg.env), None, HOST)  # SB3's SAC: actor, two critics, their targets
    found = sac_measured
    assert found.engine == "sbx" and found.device == "cpu" and found.in_use_bytes is None  # JAX's CPU keeps no stats
    assert found.params == formula.parameter_count == 336_647
    assert found.target_bytes == FLOAT * (found.params - found.trainable) > 0  # the critics' target copies
    # optax's adam: two moments per trained float, plus its step counts
    assert 2 * FLOAT * found.trainable <= found.optimizer_bytes < 2 * FLOAT * found.trainable + 1024


def test_the_estimate_of_an_sbx_run_says_it_measured_the_model(sac_measured):
    cfg = config()
    result = estimate(cfg, probe_spaces(cfg.env), None, HOST)
    assert result.network_source == SBX_SOURCE == "measured from the SBX model"
    terms = {t.name: t for t in result.terms}
    assert terms["parameters"].bytes == FLOAT * sac_measured.params and "measured from the SBX model" in terms["parameters"].note
    assert terms["optimizer"].bytes == sac_measured.optimizer_bytes
    assert "XLA's working memory is not measured" in terms["activations"].note
    assert "jax" in terms["worker_runtime"].note
    sb3_runtime = {t.name: t for t in estimate(sb3(cfg), probe_spaces(cfg.env), None, HOST).terms}["worker_runtime"]
    assert terms["worker_runtime"].bytes > sb3_runtime.bytes  # jax and XLA beside torch
    assert result.to_json()["network_source"] == "measured from the SBX model"


def test_the_measurement_is_kept_by_the_network_settings_not_the_batch():
    base = config()
    assert network_key(base) == network_key(config(batch_size=64))
    assert network_key(base) != network_key(base.model_copy(update={"policy": base.policy.model_copy(
        update={"net_arch": [64, 64]})}))
    assert network_key(base) != network_key(config(device="cpu"))  # XLA's CPU and GPU figures differ
    assert network_key(base) != network_key(sb3(base))


def test_unmeasured_sbx_says_so_and_counts_the_torch_networks():
    cfg = config(algo="TD3")  # no measurement kept for TD3 here
    result = estimate(cfg, probe_spaces(cfg.env), None, HOST)
    assert result.network_source == ""
    assert any("the SBX model is not measured yet" in n for n in result.notes)


def measured_on_gpu(cfg, in_use):
    counted = MeasuredNetwork(9_155, 9_155, 12, 0, 1, "", "sbx", 73_296, 0, 0, in_use, "cuda:0")
    measured.remember(cfg, counted)
    return counted


def test_on_a_gpu_xla_terms_replace_torchs_allocator_and_the_pool_grows_as_needed(monkeypatch):
    monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
    monkeypatch.delenv("XLA_PYTHON_CLIENT_MEM_FRACTION", raising=False)
    cfg = config("PPO", "CartPole-v1", device="cuda")
    measured_on_gpu(cfg, in_use=64 << 20)
    result = estimate(cfg, probe_spaces(cfg.env), get_profile("H100 80GB"), HOST)  # a planned card: trusted to have CUDA
    names = [t.name for t in result.terms if t.where == "gpu"]
    assert result.on_gpu and "cuda_context" in names and "xla_buffers" in names
    assert "allocator_cache" not in names and "cublas_workspaces" not in names and result.allocator_bytes == 0
    buffers = next(t for t in result.terms if t.name == "xla_buffers")
    assert buffers.bytes == (64 << 20) - (FLOAT * 9_155 + 73_296)  # what XLA held beyond the arrays counted
    assert GROWS_TEXT in result.notes
    assert result.gpu_bytes < 2 << 30


def test_a_preallocating_environment_counts_its_share_of_the_card(monkeypatch):
    cfg = config("PPO", "CartPole-v1", device="cuda")
    measured_on_gpu(cfg, in_use=None)
    card = get_profile("H100 80GB")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "true")
    monkeypatch.delenv("XLA_PYTHON_CLIENT_MEM_FRACTION", raising=False)
    result = estimate(cfg, probe_spaces(cfg.env), card, HOST)
    assert result.gpu_bytes >= 0.75 * card.memory_bytes
    assert any(t.name == "xla_preallocated" and "75%" in t.note for t in result.terms)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ".3")
    result = estimate(cfg, probe_spaces(cfg.env), card, HOST)
    assert 0.3 * card.memory_bytes <= result.gpu_bytes < 0.4 * card.memory_bytes


def test_the_preallocation_rule_is_the_workers():
    assert preallocated_fraction({}) is None
    assert preallocated_fraction({"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}) is None
    assert preallocated_fraction({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}) == 0.75
    assert preallocated_fraction({"XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}) == 0.5  # a pool size asked for
    assert preallocated_fraction({"XLA_PYTHON_CLIENT_PREALLOCATE": "true", "XLA_PYTHON_CLIENT_MEM_FRACTION": "lots"}) == 0.75
    env: dict[str, str] = {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}
    set_jax_env("auto", "linux", env)  # the worker keeps the pool the user asked for, as the estimate counts it
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in env and preallocated_fraction(env) == 0.5
    env = {}
    set_jax_env("auto", "linux", env)
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and preallocated_fraction(env) is None


def detected_card():
    return dataclasses.replace(get_profile("RTX 4060 Laptop"), detected=True, index=0)


def test_on_windows_an_sbx_run_trains_on_the_cpu_and_says_wsl2():
    cfg = config("PPO", "CartPole-v1")
    result = estimate(cfg, probe_spaces(cfg.env), detected_card(), HOST, torch=CUDA_JAX, here=[detected_card()],
                      platform="win32")
    assert result.train_device == "cpu" and not result.on_gpu
    assert result.warnings[0] == WINDOWS
    assert result.train_device_reason == "cpu - JAX has no CUDA on Windows"
    issue = device_issue(config("PPO", "CartPole-v1", device="cuda"), CUDA_JAX, "win32")
    assert issue is not None and issue.path == "runtime.device" and "JAX has no CUDA on Windows" in issue.message
    # the same config on Linux with a CUDA jax trains on the card
    linux = estimate(cfg, probe_spaces(cfg.env), detected_card(), HOST, torch=CUDA_JAX, here=[detected_card()],
                     platform="linux")
    assert linux.train_device == "cuda:0" and linux.on_gpu


def test_a_cpu_only_jax_beside_a_gpu_says_the_cuda_jax_fix():
    cfg = config("PPO", "CartPole-v1")
    result = estimate(cfg, probe_spaces(cfg.env), detected_card(), HOST, torch=CPU_JAX, here=[detected_card()],
                      platform="linux")
    assert result.train_device == "cpu" and result.train_device_reason == "cpu - jax 0.10.2 has no CUDA"
    assert 'trains on the CPU: this jax (jax 0.10.2) has no CUDA, though a GPU is present; pip install "jax[cuda12]"' \
        in result.warnings[0]
    issue = device_issue(config("PPO", "CartPole-v1", device="cuda:0"), CPU_JAX, "linux")
    assert issue is not None and 'pip install "jax[cuda12]"' in issue.message


def test_this_machines_jax_is_asked_in_a_child_and_remembered(tmp_path, monkeypatch):
    from core.estimate import jax_device

    monkeypatch.setattr(jax_device.JAX, "memo", {})
    facts = jax_device.jax_facts(refresh=True)
    assert facts["cuda_available"] is False and facts["jax"]  # this machine's CPU jax
    assert jax_device.cached_jax_facts() == facts
    monkeypatch.setattr(jax_device, "sbx_installed", lambda: False)
    assert 'pip install "rlpanel[jax]"' in jax_device.run_probe()["error"]


def finished_run(runs, name, peak_mib, engine):
    """A run folder as the worker leaves it (``tests/core/estimate/test_card_history.py``'s, with the engine its
    ``fit_record`` writes): the estimate in status.json, telemetry naming NVML's measure, summary.json by summarize."""
    run = runs / name
    run.mkdir(parents=True)
    estimate_gpu = {"bytes": 1000 * MIB, "source": "the table for hopper", "uuid": UUID, "gpu": "NVIDIA H100 80GB HBM3"}
    write_status(run, state="finished", estimate_gpu=estimate_gpu | ({"engine": engine} if engine else {}))
    lines = [{"t": 1.0, "kind": "status", "nvml": True, "run_gpu": 0}] + [
        {"t": 1.0 + i, "gpu": 0, "memory_used_bytes": 1500 * MIB, "process_memory_bytes": peak_mib * MIB,
         "process_memory_source": "nvml_process"} for i in range(3)]
    (run / "telemetry.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    write_json_atomic(RunDir(run).summary, summarize(run))
    return read_json(RunDir(run).summary)


def test_a_cards_history_keeps_sbx_runs_apart_from_torch_runs(tmp_path):
    assert finished_run(tmp_path, "2026-11-29_03", 1400, "sbx")["estimate_engine"] == "sbx"
    assert finished_run(tmp_path, "2026-11-29_02", 1000, None)["estimate_engine"] == "sb3"  # from before the engine
    finished_run(tmp_path, "2026-11-29_01", 900, "sb3")
    assert card_ratios(tmp_path, UUID, engine="sbx") == (1.4,)
    assert card_ratios(tmp_path, UUID) == (1.0, 0.9)


def test_rlpanel_estimate_of_an_sbx_run_measures_the_model(tmp_path):
    done = subprocess.run([sys.executable, "-c", CLI, "estimate", "--algo", "PPO", "--env", "CartPole-v1",
                           "--set", "runtime.engine=sbx", "--set", "runtime.device=cpu"], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={**os.environ, "RLPANEL_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "network: 9,155 parameters, measured from the SBX model" in done.stdout
    assert "python, jax, SBX and torch (its buffers) in the worker" in done.stdout


def test_the_worker_counts_its_own_model_as_the_child_does(sac_measured, monkeypatch):
    """What a worker on CUDA keeps before it records its estimate (``remember_model``), here on JAX's CPU."""
    from core.worker.factory import build_model, build_vec_env
    from core.worker.sbx_measure import remember_model

    cfg = config(device="cpu")
    monkeypatch.setattr(measured, "_cache", {})
    env, _ = build_vec_env(cfg, n_envs=1, force_dummy=True)
    try:
        remember_model(cfg, build_model(cfg, env, "cpu"), "cpu")
    finally:
        env.close()
    kept = measured.lookup(cfg)
    assert kept is not None and kept.engine == "sbx" and kept.device == "cpu"
    assert (kept.params, kept.trainable, kept.optimizer_bytes, kept.target_bytes) == (
        sac_measured.params, sac_measured.trainable, sac_measured.optimizer_bytes, sac_measured.target_bytes)
