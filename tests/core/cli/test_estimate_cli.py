"""The estimate without torch, env probing, GPU detection and the ``rlpanel estimate`` / ``gpus`` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.config.common_envs import COMMON_ENVS, default_envs
from core.config.errors import ConfigError
from core.config.schema import EnvSpec
from core.config.spaces import probe_spaces
from tests.conftest import REPO


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=env)


def test_estimate_never_imports_torch():
    code = (
        "import sys\n"
        "from core.config.presets import resolve\n"
        "from core.config.spaces import probe_spaces\n"
        "from core.estimate.gpus import get_profile, known_profiles\n"
        "from core.estimate.estimate import estimate\n"
        "for algo, env in (('PPO', 'CartPole-v1'), ('SAC', 'Pendulum-v1'), ('DQN', 'CartPole-v1')):\n"
        "    cfg = resolve('beast' if algo == 'PPO' else None, {'algo': algo, 'env': {'id': env},\n"
        "                  'policy': {'net_arch': [16384, 16384]}}).config\n"
        "    r = estimate(cfg, probe_spaces(cfg.env), get_profile('RTX 4060 Laptop'))\n"
        "    assert r.suggestion is not None, r.to_json()\n"
        "bad = [m for m in ('torch', 'stable_baselines3', 'PySide6', 'pyqtgraph') if m in sys.modules]\n"
        "print(bad)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_entry_point_is_probed_in_a_subprocess(tmp_path, monkeypatch):
    (tmp_path / "my_envs.py").write_text(
        "import gymnasium as gym\n"
        "import numpy as np\n"
        "class Grid(gym.Env):\n"
        "    def __init__(self, size=5):\n"
        "        self.observation_space = gym.spaces.Box(0, 255, (size, size), dtype=np.uint8)\n"
        "        self.action_space = gym.spaces.MultiDiscrete([3, 4])\n"
        "class Broken(gym.Env):\n"
        "    def __init__(self):\n"
        "        raise RuntimeError('no server at localhost:9000')\n")
    monkeypatch.chdir(tmp_path)
    from core.config.trust import trust

    trust("my_envs")  # user code: read only once trusted (tests/core/config/test_trust.py)
    spaces = probe_spaces(EnvSpec(entry_point="my_envs:Grid", kwargs={"size": 7}))
    assert "my_envs" not in sys.modules  # user code never runs in this process
    assert spaces.obs_shape == (7, 7) and spaces.obs_dtype == "uint8"
    assert spaces.action_kind == "multidiscrete" and spaces.action_nvec == (3, 4) and spaces.action_logits == 7
    with pytest.raises(ConfigError) as err:
        probe_spaces(EnvSpec(entry_point="my_envs:Broken"))
    assert err.value.issues[0].path == "env.entry_point"
    assert "my_envs:Broken" in str(err.value) and "no server at localhost:9000" in str(err.value)
    trust("not_there")
    with pytest.raises(ConfigError, match="No module named 'not_there'"):
        probe_spaces(EnvSpec(entry_point="not_there:Env"))


def test_missing_extra_names_the_install():
    envs = {e.id: e for e in COMMON_ENVS}
    assert envs["LunarLander-v3"].extra == "gymnasium[box2d]"
    assert all(e.extra is None for e in default_envs())
    for entry in default_envs():
        assert probe_spaces(EnvSpec(id=entry.id)).action_kind == entry.action_kind
    if not envs["LunarLander-v3"].available:
        with pytest.raises(ConfigError, match="box2d"):
            probe_spaces(EnvSpec(id="LunarLander-v3"))


def test_cli_estimate_json_fits_exit_0():
    done = run_cli("estimate", "--preset", "laptop-8gb", "--algo", "SAC", "--env", "Pendulum-v1",
                   "--gpu", "RTX 4060 Laptop", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verdict"] == "fits" and data["gpu_name"] == "RTX 4060 Laptop" and data["suggestion"] is None
    replay = next(t for t in data["terms"] if t["name"] == "replay_buffer")
    assert replay["where"] == "host" and replay["bytes"] > 30 * 2**20


def test_cli_estimate_does_not_fit_exit_3():
    done = run_cli("estimate", "--preset", "beast", "--env", "CartPole-v1", "--gpu", "rtx 4060 laptop",
                   "--set", "policy.net_arch=[16384,16384,16384]")
    assert done.returncode == 3, done.stderr
    assert "does not fit" in done.stdout and "suggestion: " in done.stdout and "net_arch" in done.stdout
    as_json = run_cli("estimate", "--preset", "beast", "--env", "CartPole-v1", "--gpu", "RTX 4060 Laptop",
                      "--set", "policy.net_arch=[16384,16384,16384]", "--json")
    assert as_json.returncode == 3
    data = json.loads(as_json.stdout)
    assert data["verdict"] == "does not fit" and data["suggestion"]["path"] == "policy.net_arch"


def test_cli_estimate_says_the_torch_threads_auto_comes_to_here():
    from core.util.threads import torch_threads

    args = ("estimate", "--algo", "PPO", "--env", "CartPole-v1", "--set", "runtime.device=cpu",
            "--set", "runtime.vec_env=subproc", "--set", "runtime.n_envs=4")
    here = torch_threads(None, n_envs=4, subproc=True, device="cpu")  # the worker's rule on this machine's cores
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert f"torch threads: {here.text()}\n" in done.stdout
    assert f"auto: {here.count} thread" in done.stdout and "4 subprocess envs)" in done.stdout
    data = json.loads(run_cli(*args, "--json").stdout)["torch_threads"]
    assert data == {"count": here.count, "auto": True, "cores": here.cores, "env_processes": 4, "gpu": False,
                    "text": here.text()}
    mine = run_cli(*args, "--set", "runtime.torch_threads=3")  # the user's own count is kept, and said so
    assert "torch threads: 3 threads (set)" in mine.stdout


def test_cli_bad_inputs_are_one_line():
    bad_gpu = run_cli("estimate", "--gpu", "RTX 9999")
    assert bad_gpu.returncode == 2 and "unknown GPU 'RTX 9999'" in bad_gpu.stderr
    assert len(bad_gpu.stderr.strip().splitlines()) == 1
    bad_env = run_cli("estimate", "--env", "NoSuchEnv-v0")
    assert bad_env.returncode == 2 and "NoSuchEnv-v0" in bad_env.stderr


def test_cli_gpus_lists_profiles(no_nvml_env):
    done = run_cli("gpus", "--json", env=no_nvml_env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    names = [p["name"] for p in data["known"]]
    for want in ("RTX 4060 Laptop", "RTX 4070", "RTX 4080", "RTX 4090", "RTX 5080", "RTX 5090", "T4",
                 "A100 40GB", "A100 80GB", "H100 80GB"):
        assert want in names
    assert data["detected"] == [] and data["auto"] is None
    text = run_cli("gpus", env=no_nvml_env)
    assert "no NVIDIA GPU detected" in text.stdout


def test_detected_gpu_becomes_auto(fake_nvml):
    fake_nvml.configure(count=1, name="NVIDIA GeForce RTX 3060", memory_total=12 * 2**30, cc_major=8, cc_minor=6)
    code = ("import json\nfrom core.estimate.gpus import get_profile\n"
            "p = get_profile('auto')\nprint(json.dumps(p.to_json() if p else None))\n")
    done = fake_nvml.run_python(code)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["detected"] and data["memory_bytes"] == 12 * 2**30
    assert data["generation"] == "ampere" and data["compute_capability"] == "8.6" and "RTX 3060" in data["name"]
    env = fake_nvml.env()
    out = subprocess.run([sys.executable, "-m", "core.cli", "estimate", "--preset", "fast", "--env", "CartPole-v1",
                          "--json"], cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    # NVML sees the card, but the test suite's torch is a CPU build: the worker trains on the CPU
    assert data["train_device"] == "cpu" and data["on_gpu"] is False and data["gpu_bytes"] == 0
    assert len(data["warnings"]) == 1 and "has no CUDA" in data["warnings"][0] and "pip install torch" in data["warnings"][0]
    text = subprocess.run([sys.executable, "-m", "core.cli", "estimate", "--preset", "fast", "--env", "CartPole-v1"],
                          cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert "trains here on cpu" in text.stdout and "warning: trains on the CPU: this torch build" in text.stdout
    # planning for a card by name (another machine, trusted to have a CUDA torch) keeps its GPU estimate,
    # and says where this machine would train it instead (one device rule: train_device is this machine's)
    out = subprocess.run([sys.executable, "-m", "core.cli", "estimate", "--preset", "fast", "--env", "CartPole-v1",
                          "--gpu", "RTX 4070", "--json"], cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    data = json.loads(out.stdout)
    assert data["on_gpu"] is True and data["planned_device"] == "cuda:0" and data["gpu_name"] == "RTX 4070"
    assert data["train_device"] == "cpu" and data["this_machine"]["on_gpu"] is False
    assert data["warnings"][0].startswith("planned for RTX 4070 (the target), which is not this machine: here it "
                                          "trains on cpu - torch ")


def test_no_gpu_means_cpu_capacity(no_nvml_env):
    done = run_cli("estimate", "--preset", "fast", "--env", "CartPole-v1", "--json", env=no_nvml_env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["gpu_name"] is None and data["on_gpu"] is False and data["gpu_bytes"] == 0
    assert data["capacity_bytes"] == data["host_capacity_bytes"]
    assert any("CPU" in n for n in data["notes"])


@pytest.mark.skipif(not os.path.exists(REPO / "bench" / "vram_check.py"), reason="bench not written")
def test_vram_bench_without_cuda_exits_0():
    done = subprocess.run([sys.executable, "bench/vram_check.py", "--timing-only"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "per call" in done.stdout
