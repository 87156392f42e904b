"""The rl_zoo3 package's entries on classic-control envs, imported as presets, train 400 steps to
``finished`` in real workers (SB3's files and sb3-contrib's)."""

from __future__ import annotations

import pytest

from core.config.presets import resolve
from core.run.control import launch_worker
from core.run.status import read_status
from core.util.yaml_reader import read_yaml_mapping
from core.zoo.importer import REFUSED, import_zoo_file, installed_zoo_file
from tests.training_helpers import last_step, make_run

pytestmark = pytest.mark.training

STEPS = 400  # past learning_starts, so every entry takes gradient steps; short: five workers share two cores
CLASSIC = {"CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1", "Pendulum-v1"}


@pytest.mark.timeout(900)  # up to five workers side by side, each 400 steps with the zoo's gradient steps
@pytest.mark.parametrize("algo", ["ppo", "a2c", "sac", "dqn", "td3", "ddpg", "tqc", "trpo", "ars", "ppo_lstm", "crossq",
                                  "qrdqn"])
def test_classic_control_entries_train_to_finished(algo, runs_dir):
    path = installed_zoo_file(algo)
    envs = [e for e in read_yaml_mapping(path) if e in CLASSIC]
    assert envs, f"{path} has no classic-control entry"
    results = import_zoo_file(path, envs)
    assert all(r.status != REFUSED for r in results)
    runs = []
    for r in results:  # the file's entries side by side: each a real detached worker, as the window launches them
        # one torch thread each: the workers run side by side. An entry that waits longer than the budget
        # before learning (learning_starts 10,000) is refused by rlpanel's rule: it waits 200 steps here instead.
        overrides: dict = {"budget": {"total_timesteps": STEPS}, "runtime": {"torch_threads": 1}}
        preset = resolve(r.preset).config
        if getattr(preset.params, "learning_starts", 0) >= STEPS:
            overrides[preset.spec.section] = {"learning_starts": STEPS // 2}
        cfg = resolve(r.preset, overrides).config
        run = make_run(runs_dir, cfg.model_dump(mode="json", exclude_unset=True))
        runs.append((r.env, run, launch_worker(run, reap=False)))
    for env, run, proc in runs:
        assert proc.wait(800) == 0, (env, (run / "worker.log").read_text()[-3000:])
        assert read_status(run).state == "finished", (env, (run / "worker.log").read_text()[-3000:])
        assert last_step(run) >= STEPS, env
