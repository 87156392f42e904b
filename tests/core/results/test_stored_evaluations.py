"""The results table and its exports show each run's newest stored evaluation (rlpanel evaluate), and a delta
against the baseline compares stored evaluations when both runs have one, naming them."""

from __future__ import annotations

import csv
import io
import json

import pytest

from core.results.export import to_csv, to_markdown
from core.results.table import columns_for, results
from core.run.evaluations import Evaluation, append_evaluation, ci95
from tests.results_helpers import make_result_run

STORED = ["Eval mean (stored)", "Stored eval checkpoint (step)", "Stored eval episodes", "Stored eval deterministic"]


def _evaluate(run, step: int, rewards: list[float], deterministic: bool = True, checkpoint: str = "last") -> Evaluation:
    mean = sum(rewards) / len(rewards)
    std = (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5
    ev = Evaluation(run.name, checkpoint, step, len(rewards), deterministic, 20_000, mean, std, ci95(rewards), 50.0,
                    {}, rewards, [50] * len(rewards))
    append_evaluation(run, ev)
    return ev


def test_rows_and_exports_show_the_newest_stored_evaluation(runs_dir):
    evaluated = make_result_run(runs_dir, "evaluated", [10.0] * 30)
    plain = make_result_run(runs_dir, "plain", [12.0] * 30)
    assert not [c for c in columns_for(results([plain])) if c.title in STORED]  # no stored evaluation: no columns
    _evaluate(evaluated, 512, [1.0, 2.0, 3.0])
    _evaluate(evaluated, 1024, [20.0, 30.0, 40.0, 50.0], deterministic=False, checkpoint="best")  # the newest
    rows = results([evaluated, plain])
    one, two = rows
    assert (one.stored_eval_mean_reward, one.stored_eval_checkpoint, one.stored_eval_episodes) == (35.0, 1024, 4)
    assert one.stored_eval_deterministic is False and "best (step 1,024), 4 episodes, stochastic" in one.stored_eval_note
    assert two.stored_eval_mean_reward is None and two.stored_eval_checkpoint is None
    titles = [c.title for c in columns_for(rows)]
    assert [t for t in titles if t in STORED] == STORED
    data = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [data[0][t] for t in STORED] == ["35.0", "1024", "4", "False"] and [data[1][t] for t in STORED] == [""] * 4
    line = to_markdown(rows).splitlines()[2].split(" | ")
    assert [line[titles.index(t)] for t in STORED] == ["35.00", "1,024", "4", "no"]
    as_json = json.loads(json.dumps(one.to_json()))  # rlpanel export --json: the fields by name
    assert (as_json["stored_eval_mean_reward"], as_json["stored_eval_checkpoint"]) == (35.0, 1024)


def test_the_delta_compares_stored_evaluations_when_both_runs_have_one(runs_dir):
    base = make_result_run(runs_dir, "base", [100.0] * 30, evals=[(90.0, 5.0)])
    run = make_result_run(runs_dir, "run", [50.0] * 30, evals=[(80.0, 5.0)])
    _, row = results([run], baseline=base)
    assert row.delta_basis == "eval 5 vs 5 ep"  # periodic evaluations while one run has no stored one
    ours = _evaluate(run, 1024, [200.0, 210.0, 190.0, 200.0])
    _, row = results([run], baseline=base)
    assert row.delta_basis == "eval 5 vs 5 ep"
    ref = _evaluate(base, 768, [150.0, 160.0])
    _, row = results([run], baseline=base)
    assert row.delta_reward == pytest.approx(200.0 - 155.0) and row.delta_reward_pct == pytest.approx(100 * 45 / 155)
    assert row.delta_basis == "stored eval (step 1,024 vs 768), 4 vs 2 ep"
    assert row.delta_se == pytest.approx((ours.std_reward ** 2 / 4 + ref.std_reward ** 2 / 2) ** 0.5)
