"""The rl_zoo3 package's entries on classic-control envs, imported as presets (SB3's files and sb3-contrib's):
the first entry of each file trains 400 steps to ``finished`` in a real worker, as the window launches it; every
other entry is built by the worker's own factory and learns past its ``learning_starts`` in this process (the
same model, env wrappers and policy; a worker process each cost ~5 s of start-up on two shared cores)."""

from __future__ import annotations

import pytest

from core.config.presets import resolve
from core.launch.control import launch_worker
from core.run.status import read_status
from core.util.yaml_reader import read_yaml_mapping
from core.zoo.importer import REFUSED, import_zoo_file, installed_zoo_file
from tests.training_helpers import last_step, make_run

pytestmark = pytest.mark.training

STEPS = 400  # past learning_starts, so every entry takes gradient steps
IN_PROCESS_STEPS = 200  # the other entries: past their learning_starts (halved), a few gradient steps
CLASSIC = {"CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1", "Pendulum-v1"}


@pytest.mark.timeout(900)  # a worker of 400 steps with the zoo's gradient steps, and up to four entries here
@pytest.mark.parametrize("algo", ["ppo", "a2c", "sac", "dqn", "td3", "ddpg", "tqc", "trpo", "ars", "ppo_lstm", "crossq",
                                  "qrdqn"])
def test_classic_control_entries_train_to_finished(algo, runs_dir):
    path = installed_zoo_file(algo)
    envs = [e for e in read_yaml_mapping(path) if e in CLASSIC]
    assert envs, f"{path} has no classic-control entry"
    results = import_zoo_file(path, envs)
    assert all(r.status != REFUSED for r in results)
    import torch

    from core.worker.factory import build_model, build_vec_env, wrap_normalize

    first, rest = results[0], results[1:]
    run = make_run(runs_dir, entry_config(first.preset, STEPS).model_dump(mode="json", exclude_unset=True))
    proc = launch_worker(run, reap=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the worker on two cores: more threads beside it only spin
    try:
        for r in rest:  # while the worker trains: the others built and stepped here, with the worker's factory
            cfg = entry_config(r.preset, IN_PROCESS_STEPS)
            env = wrap_normalize(cfg, build_vec_env(cfg, force_dummy=True)[0])  # the envs in this process
            try:
                model = build_model(cfg, env, device="cpu")
                model.learn(IN_PROCESS_STEPS)
                assert model.num_timesteps >= IN_PROCESS_STEPS, r.env
            finally:
                env.close()
    finally:
        torch.set_num_threads(threads)
    assert proc.wait(800) == 0, (first.env, (run / "worker.log").read_text()[-3000:])
    assert read_status(run).state == "finished", (first.env, (run / "worker.log").read_text()[-3000:])
    assert last_step(run) >= STEPS, first.env


def entry_config(preset, steps: int):
    """The entry's config for a short run: an entry that waits longer than the budget before learning
    (learning_starts 10,000) is refused by rlpanel's rule, so it waits half the budget here instead."""
    overrides: dict = {"budget": {"total_timesteps": steps}, "runtime": {"torch_threads": 1}}
    resolved_preset = resolve(preset).config
    if getattr(resolved_preset.params, "learning_starts", 0) >= steps:
        overrides[resolved_preset.spec.section] = {"learning_starts": steps // 2}
    return resolve(preset, overrides).config
