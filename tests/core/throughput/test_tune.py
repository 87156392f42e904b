"""A real tune on CartPole: probes are short trainings in child processes, screened by the fit estimate."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from core.config.presets import get_preset, list_presets, resolve
from core.config.spaces import probe_spaces
from core.config.validate import validate_config
from core.estimate.estimate import estimate
from core.estimate.result import TIGHT_UPTO
from core.throughput.preset import MARK, save_tuned_preset
from core.throughput.probe import ProbePool
from core.throughput.search import TuneOptions, Tuner
from core.throughput.table import pick_reason
from tests.conftest import REPO

pytestmark = pytest.mark.training

# short update cycles, one torch thread: a probe measures several cycles in a second on a busy machine
SMALL = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"n_steps": 64, "n_epochs": 2},
         "runtime": {"device": "cpu", "torch_threads": 1}}
SB3 = ["sb3"]  # one engine: SBX's probes are test_engines'


def test_tune_on_cartpole_picks_a_fitting_config_and_saves_a_preset_that_loads():
    cfg = validate_config(SMALL).config
    rows = []
    result = Tuner(cfg, TuneOptions(budget_s=20, probe_s=1.5, engines=SB3), on_row=lambda i, row: rows.append(i)).run()
    picked = result.picked
    assert picked is not None and picked.fits and picked.steps_per_s and picked.steps_per_s > 0
    assert picked.host_bytes and picked.host_bytes > 50 << 20  # a real process tree's memory
    assert rows == list(range(len(result.rows)))  # every row was reported as it came
    assert result.rows[0].settings["runtime.n_envs"] == 1  # the user's own config comes first
    measured = [r for r in result.rows if r.steps_per_s]
    assert all(r.collect_pct is not None and r.train_pct is not None for r in measured)  # each probe's split
    assert all(abs(r.collect_pct + r.train_pct - 100) < 1e-6 and r.collect_pct > 0 for r in measured)
    assert pick_reason(result) and "%" in pick_reason(result)
    name = save_tuned_preset(cfg, result)
    assert name == "tuned-ppo-cartpole-v1"
    preset = get_preset(name)
    assert preset.error is None and preset.description.startswith(MARK)
    assert "steps/s" in preset.description and "n_envs=1" in preset.description  # the measured table
    loaded = resolve(name).config
    for path, value in picked.settings.items():
        head, _, field = path.partition(".")
        assert getattr(loaded.runtime if head == "runtime" else loaded.ppo, field) == value
    assert loaded.ppo.n_epochs == 2  # the user's other settings are kept


def test_a_candidate_the_estimate_refuses_is_never_probed():
    # the user asks for 2 subprocess envs; a host too small for them but big enough for dummy envs
    user = validate_config({**SMALL, "runtime": {**SMALL["runtime"], "n_envs": 2, "vec_env": "subproc"}}).config
    spaces = probe_spaces(user.env)
    need = estimate(user, spaces, None, suggest=False).host_bytes
    host = int(need / TIGHT_UPTO * 0.97)
    dummy = validate_config({**SMALL, "runtime": {**SMALL["runtime"], "n_envs": 2}}).config
    assert estimate(dummy, spaces, None, host, suggest=False).fits
    probed = []

    class RecordingPool(ProbePool):
        def probe(self, cfg, seconds, timeout_s=None, cancel=None):
            probed.append((cfg.runtime.n_envs, cfg.runtime.vec_env))
            return super().probe(cfg, seconds, timeout_s, cancel)

    result = Tuner(user, TuneOptions(budget_s=25, probe_s=1.5, host_memory_bytes=host, engines=SB3), prober=RecordingPool()).run()
    refused = [r for r in result.rows if r.fits is False]
    assert refused and refused[0].settings["runtime.vec_env"] == "subproc"
    assert all(r.steps_per_s is None and r.note.startswith("not probed: the estimate says") for r in refused)
    assert ("subproc" not in {vec for _, vec in probed}) and probed  # dummy envs were probed, subproc never
    assert len(probed) == sum(1 for r in result.rows if r.fits is not False)
    assert result.picked is not None and result.picked.settings["runtime.vec_env"] == "dummy"


def test_cli_json_has_the_preset_the_pick_and_the_table():
    args = ["tune", "--algo", "PPO", "--env", "CartPole-v1", "--set", "ppo.n_steps=64", "--set", "ppo.n_epochs=2",
            "--set", "runtime.torch_threads=1", "--device", "cpu", "--budget-s", "15", "--probe-s", "1", "--json"]
    done = subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) >= {"preset", "pick", "table", "machine"} and data["preset"] == "tuned-ppo-cartpole-v1"
    assert data["machine"].startswith("tuned for this machine (cpu") and data["baseline"] == 0
    assert data["pick"]["runtime.n_envs"] >= 1 and data["pick"]["ppo.n_steps"] >= 1
    row = data["table"][0]
    assert set(row) >= {"settings", "steps_per_s", "host_bytes", "gpu_bytes", "fits"}
    assert row["fits"] is True and row["steps_per_s"] > 0 and row["settings"]["runtime.vec_env"] == "dummy"
    assert "steps/s" in done.stderr  # the table went to stderr as it came
    assert done.stderr.index("tuned for this machine") < done.stderr.index("steps/s")  # which machine, before the table
    assert resolve("tuned-ppo-cartpole-v1").config.ppo.n_epochs == 2
    # the list has one line a preset, the tuned one's table too (its description holds it); `show` has the table
    listed = subprocess.run([sys.executable, "-m", "core.cli", "presets"], cwd=REPO, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == len(list_presets())
    tuned = [line for line in lines if line.startswith("tuned-ppo-cartpole-v1 ")]
    assert len(tuned) == 1 and tuned[0].count("n_envs=") == 1  # the pick, no row of the table
    assert "rlpanel presets show tuned-ppo-cartpole-v1" in tuned[0]  # where the rest is
    shown = subprocess.run([sys.executable, "-m", "core.cli", "presets", "show", "tuned-ppo-cartpole-v1"], cwd=REPO,
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("n_envs=") == len(data["table"]) + 1  # the pick's line and every row of the table
    assert yaml.safe_load(shown.stdout)["ppo"]["n_epochs"] == 2  # the table is in comments: the output is still YAML
