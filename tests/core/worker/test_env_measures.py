"""The env's own measures (env.info_keys): env -> a trained run and a random baseline -> episode records ->
summary -> the results table -> xlsx and md with the change against the baseline, read back with openpyxl."""

from __future__ import annotations

import io

import pytest

from core.util.files import read_json
from tests.training_helpers import make_run, records, run_worker

pytestmark = pytest.mark.training
ENV = {"entry_point": "tests.core.worker.info_env:InfoKeysEnv", "info_keys": ["co2_kg", "comfort_pct", "missing_key"]}


def test_env_measures_from_the_env_to_xlsx_and_md_against_a_random_baseline(runs_dir):
    from openpyxl import load_workbook

    from core.results.export import to_markdown, to_xlsx
    from core.results.table import columns_for, results

    agent = make_run(runs_dir, {"algo": "PPO", "env": ENV, "name": "agent",
                                "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 4, "learning_rate": 0.003},
                                "runtime": {"n_envs": 2, "seed": 3, "telemetry_hz": 0, "torch_threads": 1},
                                "budget": {"total_timesteps": 3000, "checkpoint_every": 0}})
    base = make_run(runs_dir, {"algo": "random", "env": ENV, "name": "base", "runtime": {"seed": 1, "telemetry_hz": 0},
                               "budget": {"episodes": 40}})
    for run in (agent, base):
        assert run_worker(run) == 0, (run / "worker.log").read_text()
        episodes = records(run, "episode")
        assert episodes and all(set(ep["m"]) == {"co2_kg", "comfort_pct"} for ep in episodes)  # the text and the
        for ep in episodes:  # missing key are left out; the measures are the env's own arithmetic
            assert ep["m"]["co2_kg"] == pytest.approx(0.5 * ep["m"]["comfort_pct"] / 100 * 20)
    summary = read_json(agent / "summary.json")
    assert set(summary["final_measures"]) == {"co2_kg", "comfort_pct"}
    last = records(agent, "episode")[-100:]
    assert summary["final_measures"]["co2_kg"] == pytest.approx(sum(e["m"]["co2_kg"] for e in last) / len(last))

    rows = results([agent], baseline=base)
    b, a = rows
    assert b.measures["co2_kg"] == pytest.approx(read_json(base / "summary.json")["all_measures"]["co2_kg"])
    expected = 100 * (a.measures["co2_kg"] - b.measures["co2_kg"]) / abs(b.measures["co2_kg"])
    assert a.measures_pct["co2_kg"] == pytest.approx(expected) and b.measures_pct["co2_kg"] == 0
    assert a.measures["co2_kg"] < b.measures["co2_kg"]  # heating costs reward: the agent learnt to heat less
    titles = [c.title for c in columns_for(rows)]
    assert {"co2_kg", "co2_kg vs baseline (%)", "comfort_pct", "comfort_pct vs baseline (%)"} <= set(titles)

    sheet = load_workbook(io.BytesIO(to_xlsx(rows))).active
    header = [c.value for c in sheet[1]]
    cells = {title: [sheet.cell(r, header.index(title) + 1).value for r in (2, 3)]
             for title in ("Name", "co2_kg", "co2_kg vs baseline (%)")}
    assert cells["Name"] == ["base", "agent"]
    assert cells["co2_kg"] == pytest.approx([b.measures["co2_kg"], a.measures["co2_kg"]])
    assert cells["co2_kg vs baseline (%)"] == pytest.approx([0.0, expected])
    md = to_markdown(rows)
    assert "co2_kg vs baseline (%)" in md and f"{expected:+.1f} %" in md
