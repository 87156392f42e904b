"""Which runs form a group of seeds: by the group they were launched in, or by config (all but the seed)."""

from __future__ import annotations

from core.config.validate import validate_config
from core.results.grouping import group_runs
from core.run.status import write_status
from core.run.store import RunStore


def make(runs_dir, seed: int, lr: float = 3e-4, device: str = "cpu", group: str | None = None):
    raw = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"seed": seed, "device": device},
           "ppo": {"learning_rate": lr}}
    run = RunStore(runs_dir).create(validate_config(raw).config)
    if group is not None:
        write_status(run, group={"id": group, "seed": seed, "size": 3})
    return run


def test_runs_group_by_their_launch_group_or_by_everything_but_the_seed(runs_dir):
    a = [make(runs_dir, s, group="g1") for s in (0, 1, 2)]
    b = [make(runs_dir, s, lr=1e-3, device="cuda" if s else "cpu") for s in (0, 1)]  # device: not what is learned
    alone = make(runs_dir, 9)
    by_group = group_runs([*a, *b, alone], by="group")
    assert [g.n for g in by_group] == [3, 1, 1, 1] and by_group[0].runs == tuple(a) and by_group[0].label == "g1"
    by_config = group_runs([*a, *b, alone], by="config")
    assert [(g.runs, g.label) for g in by_config] == [((*a, alone), "PPO CartPole-v1"), (tuple(b), "PPO CartPole-v1")]
    assert len({g.key for g in by_config}) == 2


def test_the_engine_is_what_is_learned_and_a_config_from_before_it_was_a_setting_is_sb3s(runs_dir):
    import yaml

    sb3 = [make(runs_dir, s) for s in (0, 1)]
    config = sb3[0] / "config.yaml"  # a run written before runtime.engine existed: SB3's, by its config alone
    raw = yaml.safe_load(config.read_text())
    del raw["runtime"]["engine"]
    config.write_text(yaml.safe_dump(raw))
    sbx = RunStore(runs_dir).create(validate_config({"algo": "PPO", "runtime": {"seed": 0, "engine": "sbx"},
                                                     "ppo": {"learning_rate": 3e-4}}).config)
    assert [g.runs for g in group_runs([*sb3, sbx], by="config")] == [tuple(sb3), (sbx,)]
