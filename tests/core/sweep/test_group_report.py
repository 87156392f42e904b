"""What the pruner sees of a trial of several runs: the group's running mean at each evaluation step, over the runs
that reached it, once no live run is still short of it (real run folders' metrics.jsonl, a real Optuna study)."""

from __future__ import annotations

import json

from core.sweep.folder import SweepFolder
from core.sweep.runner import SweepRunner, _frozen
from core.sweep.spec import parse_sweep
from core.sweep.study import distributions, open_study
from tests.core.sweep.helpers import SMALL_SWEEP


def evals(run_dir, points: dict[int, float]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"kind": "eval", "step": s, "t": 1.0 + s, "mean_reward": v, "std_reward": 0.0, "episodes": 3})
             for s, v in points.items()]
    (run_dir / "metrics.jsonl").write_text("".join(line + "\n" for line in lines))


def test_the_pruner_sees_the_groups_running_mean_over_the_runs_that_reached_each_step(runs_dir):
    spec = parse_sweep({**SMALL_SWEEP, "seeds": 2, "pruner": "none"})
    folder = SweepFolder(runs_dir, spec.name)
    study = open_study(spec, folder)
    sweep = SweepRunner(spec, folder, study)
    number = study.ask(distributions(spec)).number
    dirs = {"s0": runs_dir / "a-s0", "s1": runs_dir / "a-s1"}
    evals(dirs["s0"], {500: 10.0, 1000: 20.0})
    evals(dirs["s1"], {500: 30.0})

    sweep.report(_frozen(study, number), dirs, live={"s0", "s1"}, prune=False)
    assert _frozen(study, number).intermediate_values == {500: 20.0}  # s1 lives and has not reached 1000: wait

    evals(dirs["s1"], {500: 30.0, 1000: 40.0})
    sweep.report(_frozen(study, number), dirs, live={"s0", "s1"}, prune=False)
    assert _frozen(study, number).intermediate_values == {500: 20.0, 1000: 30.0}

    evals(dirs["s0"], {500: 10.0, 1000: 20.0, 1500: 50.0})  # s1 crashed at 1000 (not live): 1500 is s0's alone
    sweep.report(_frozen(study, number), dirs, live={"s0"}, prune=False)
    assert _frozen(study, number).intermediate_values == {500: 20.0, 1000: 30.0, 1500: 50.0}
