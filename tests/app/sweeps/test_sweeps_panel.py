"""The Sweeps tab over a real small sweep, started from the tab: table, charts, importance, best as preset."""

from __future__ import annotations

import pytest

from app.sweeps.panel import SweepsPanel
from app.threads.background import wait_for_background
from core.config.presets import resolve
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file

TIMEOUT_MS = 600_000  # three trials, each a worker importing torch and SB3 on a loaded 2-core machine

# random seed 1 asks lr 1e-7, 0.01, 1e-7: two values of the objective, so importance has something to say
THREE_TRIALS = {**SMALL_SWEEP, "name": "tab-sweep", "n_trials": 3, "seed": 1, "pruner": "none",
                "base": {**SMALL_SWEEP["base"], "timesteps": 1000}}


def table(panel: SweepsPanel) -> list[dict[str, str]]:
    t = panel.table
    headers = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    return [{h: t.item(r, c).text() for c, h in enumerate(headers)} for r in range(t.rowCount())]


@pytest.mark.gui
@pytest.mark.training
@pytest.mark.timeout(900)
def test_sweeps_tab_runs_a_sweep_file_and_shows_its_study(qtbot, tmp_path, runs_dir):
    panel = SweepsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.resize(1200, 850)
    panel.show()
    qtbot.waitUntil(lambda: "No sweep in this runs folder" in panel.state_label.text(), timeout=10_000)
    assert not panel.save_button.isEnabled()

    panel.run_file(sweep_file(tmp_path, THREE_TRIALS))
    qtbot.waitUntil(lambda: panel.name == "tab-sweep", timeout=60_000)
    qtbot.waitUntil(lambda: panel.report is not None and panel.report["state"] == "finished", timeout=TIMEOUT_MS)
    wait_for_background()
    qtbot.waitUntil(lambda: bool(panel.report.get("importances")), timeout=30_000)

    rows = table(panel)
    assert [r["#"] for r in rows] == ["0", "1", "2"]
    assert [r["State"] for r in rows] == ["complete"] * 3
    assert [r["ppo.learning_rate"] for r in rows] == ["1e-07", "0.01", "1e-07"]
    assert all(r["Run"].endswith(f"tab-sweep-t{i}") for i, r in enumerate(rows))
    assert panel.objective.point_count == 3
    assert set(panel.importance.values) == {"ppo.learning_rate", "ppo.n_epochs"}
    assert panel.parallel.axis_names == ["ppo.learning_rate", "ppo.n_epochs", "objective"]
    assert len(panel.parallel.lines) == 3
    assert "tab-sweep: finished" in panel.state_label.text()
    assert not panel.stop_button.isEnabled() and not panel.resume_button.isEnabled()

    with qtbot.waitSignal(panel.run_activated, timeout=5_000) as opened:
        panel.table.cellDoubleClicked.emit(1, 0)
    assert opened.args[0] == runs_dir / rows[1]["Run"]

    assert panel.save_button.isEnabled()
    path = panel.save_best_as_preset("cartpole-best")
    cfg = resolve("cartpole-best").config
    assert path.is_file() and cfg.algo == "PPO" and cfg.params.learning_rate == 0.01
    assert cfg.budget.total_timesteps == 1000 and cfg.budget.eval_every == 500
    panel.grab().save(str(tmp_path / "sweeps.png"))


def synthetic_sweep(runs_dir) -> None:
    """A stopped sweep's folder and study written directly (no training): complete, pruned and failed trials."""
    import optuna

    from core.sweep.folder import SweepFolder, save_spec_data, write_state
    from core.sweep.spec import parse_sweep, spec_data
    from core.sweep.study import distributions, open_study

    spec = parse_sweep({**SMALL_SWEEP, "name": "synthetic", "space": {
        "ppo.learning_rate": {"log_uniform": [1.0e-5, 1.0e-2]},
        "policy.net_arch": {"choice": [[64, 64], [256, 256]]}}})
    folder = SweepFolder(runs_dir, "synthetic")
    save_spec_data(folder, spec_data(spec))
    write_state(folder, {"name": "synthetic", "state": "stopped", "runner": None})
    study = open_study(spec, folder)
    dists = distributions(spec)
    State = optuna.trial.TrialState
    trials = [(1e-4, "[64, 64]", 120.0, State.COMPLETE), (1e-3, "[256, 256]", 300.0, State.COMPLETE),
              (1e-5, "[64, 64]", None, State.PRUNED), (5e-3, "[256, 256]", 200.0, State.COMPLETE),
              (2e-3, "[256, 256]", None, State.FAIL)]
    for i, (lr, arch, value, state) in enumerate(trials):
        trial = optuna.trial.create_trial(params={"ppo.learning_rate": lr, "policy.net_arch": arch}, distributions=dists,
                                          value=value, state=state,
                                          intermediate_values={500: 9.0} if state == State.PRUNED else {500: 50.0},
                                          user_attrs={"run_id": f"run-{i}"} if state != State.FAIL else
                                          {"fail_reason": "does not fit in host RAM: never launched"})
        study.add_trial(trial)


@pytest.mark.gui
def test_synthetic_sweep_draws_complete_pruned_and_failed_trials_and_offers_resume(qtbot, runs_dir):
    synthetic_sweep(runs_dir)
    panel = SweepsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.resize(1200, 850)
    panel.show()
    qtbot.waitUntil(lambda: panel.report is not None and panel.report["name"] == "synthetic", timeout=60_000)
    rows = table(panel)
    assert [r["State"] for r in rows] == ["complete", "complete", "pruned", "complete", "fail"]
    assert rows[1]["policy.net_arch"] == "[256, 256]" and rows[4]["Reason"].startswith("does not fit")
    assert panel.objective.point_count == 4  # the failed trial has no value; the pruned one shows where it was cut
    assert len(panel.parallel.lines) == 4 and panel.parallel.axis_names[-1] == "objective"
    assert set(panel.importance.values) == {"ppo.learning_rate", "policy.net_arch"}
    assert panel.resume_button.isEnabled() and not panel.stop_button.isEnabled()
    assert "synthetic: stopped" in panel.state_label.text() and "best #1: 300" in panel.state_label.text()


def seeded_synthetic_sweep(runs_dir) -> None:
    """A finished sweep of 3 seeds per trial, its study written directly (no training): each trial's runs' values."""
    import optuna

    from core.sweep.folder import SweepFolder, save_spec_data, write_state
    from core.sweep.spec import parse_sweep, spec_data
    from core.sweep.study import distributions, open_study

    spec = parse_sweep({**SMALL_SWEEP, "name": "seeded", "seeds": 3})
    folder = SweepFolder(runs_dir, "seeded")
    save_spec_data(folder, spec_data(spec))
    write_state(folder, {"name": "seeded", "state": "finished", "runner": None})
    study = open_study(spec, folder)
    for i, (lr, values) in enumerate([(0.01, [300.0, 340.0, 320.0]), (1e-7, [9.0, 9.5, 10.0]), (0.01, [310.0, 290.0, 330.0])]):
        runs = {f"s{s}": f"run-{i}-s{s}" for s in range(3)}
        study.add_trial(optuna.trial.create_trial(
            params={"ppo.learning_rate": lr, "ppo.n_epochs": 4}, distributions=distributions(spec),
            value=sum(values) / 3, user_attrs={"run_id": runs["s0"], "runs": runs,
                                               "values": {f"s{s}": v for s, v in enumerate(values)}}))


@pytest.mark.gui
def test_a_seeded_sweep_shows_each_trials_n_value_and_interval_and_the_top_twos_overlap(qtbot, runs_dir):
    from core.results.stats import aggregate

    seeded_synthetic_sweep(runs_dir)
    panel = SweepsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.report is not None and panel.report["name"] == "seeded", timeout=60_000)
    rows = table(panel)
    first = aggregate([300.0, 340.0, 320.0])
    assert [r["n"] for r in rows] == ["3", "3", "3"]
    assert rows[0]["Value ±"] == f"{first.mean:.4g} ± {first.se:.3g}"
    assert rows[0]["95% interval"] == f"[{first.ci95[0]:.4g}, {first.ci95[1]:.4g}]"
    assert rows[1]["Run"] == "run-1-s0 +2"
    headers = [panel.table.horizontalHeaderItem(c).text() for c in range(panel.table.columnCount())]
    assert panel.table.isColumnHidden(headers.index("Per env")), "one env: no per-env column to read"
    assert not panel.table.isColumnHidden(headers.index("95% interval"))
    label = panel.state_label.text()
    assert "best #0: 320 ± 11.5" in label and "runner-up #2" in label
    assert "the top 2 are not separated at 3 seeds" in label  # [270, 370] and [260, 360] overlap
    panel.save_best_as_preset("seeded-best")
    from core.config.presets import get_preset

    description = get_preset("seeded-best").description
    assert "trial #0" in description and "n=3" in description and "95 % CI [" in description
    assert "not separated at 3 seeds" in description
