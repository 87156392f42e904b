"""A user's first evening, in the real window on a screen of a given size: a runs folder trained for real (a group of
two PPO seeds and a random baseline, by the CLI), then Configure with laptop-8gb picked on CartPole-v1, a run launched
with the toolbar's Launch (every question it asks answered Yes, as a user would), followed in the Monitor until its
collect/train bar shows, then Runs, Results (the group and the baseline ticked, then one row per group) and Queue,
and the run stopped with Stop. Each view is checked for cut words and charts (``clipping.findings``), for a toolbar
row whose hidden controls its » does not offer (``test_toolbar_overflow``), and for the table columns that are read
(``tables_tour.columns_cut``); the Monitor's charts for whole rows of at least 100 px (``monitor_room``).

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json QT_SCALE_FACTOR=1.5 python -m tests.app.layout.evening RUNS

prints one JSON object ``{"screen": [w, h], "window": [w, h], "views": {view: [finding, ...]}, "questions": [...],
"behind_more": {view: [control, ...]}, "run": {...}}``. RLPANEL_HOME should point at a scratch folder: the window's
settings go there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QToolBar, QWidget

from tests.app.configure.helpers import type_into, wait_settled
from tests.app.configure.test_preset_env import choose_env, click_preset
from tests.app.layout.clipping import findings
from tests.app.layout.monitor_room import MIN_CHART_PX, chart_problems
from tests.app.layout.tables_tour import columns, columns_cut, wait_results
from tests.app.layout.test_toolbar_overflow import assert_every_hidden_item_offered
from tests.app.layout.tour import open_settled, settle
from tests.conftest import REPO
from tests.training_helpers import lean_args

WAIT_S = 180  # for a real run to start and finish its first rollout and update, on a loaded CI machine
BUDGET = "200000"  # steps: far more than the evening's minutes here, so the run is live until Stop
PRESET, ENV = "laptop-8gb", "CartPole-v1"


class Bot:
    """What the shared helpers ask of pytest-qt's ``qtbot``, for a script that has no pytest session."""

    def waitUntil(self, condition: Callable[[], object], timeout: int = 5000) -> None:  # noqa: N802 (qtbot's name)
        deadline = time.monotonic() + timeout / 1000
        while True:
            try:
                met = condition()
                if met is None or met:  # as qtbot's: a callable that asserts and returns None is met when it passes
                    return
            except AssertionError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout} ms in vain")
            QApplication.processEvents()
            time.sleep(0.02)

    def mouseClick(self, widget: QWidget, button, pos=None) -> None:  # noqa: N802
        QTest.mouseClick(widget, button, pos=pos) if pos is not None else QTest.mouseClick(widget, button)

    def keyClicks(self, widget: QWidget, text: str) -> None:  # noqa: N802
        QTest.keyClicks(widget, text)


class Answerer:
    """Answers each message box Yes (OK where it has no Yes) once it has been shown a moment, as a user who reads it
    and goes on, and records its title, text and what it cuts."""

    def __init__(self) -> None:
        self.asked: list[dict] = []
        self._seen: dict[int, float] = {}
        self._timer = QTimer()
        self._timer.timeout.connect(self._look)
        self._timer.start(100)

    def _look(self) -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            return
        first = self._seen.setdefault(id(box), time.monotonic())
        if time.monotonic() - first < 0.5:  # laid out and painted before it is read
            return
        self.asked.append({"title": box.windowTitle(), "text": box.text(), "cut": findings(box)})
        button = box.button(QMessageBox.StandardButton.Yes) or box.button(QMessageBox.StandardButton.Ok)
        (button or box.defaultButton()).click()


def train_runs_folder(runs_dir: Path) -> dict[str, list[str]]:
    """A group of two PPO seeds and a random baseline, trained for real by ``rlpanel train`` side by side; their ids."""
    commands = [
        ["train", "--runs-dir", str(runs_dir), "--algo", "PPO", "--env", ENV, "--timesteps", "1024", "--seeds", "2",
         "--name", "ppo-first", "--set", "ppo.n_steps=256", "--set", "ppo.batch_size=64"],
        ["train", "--runs-dir", str(runs_dir), "--algo", "random", "--env", ENV, "--episodes", "40",
         "--name", "random-baseline"],
    ]
    children = [subprocess.Popen([sys.executable, "-m", "core.cli", *lean_args(args)], cwd=REPO,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for args in commands]
    for child, args in zip(children, commands, strict=True):
        out, err = child.communicate(timeout=WAIT_S * 2)
        if child.returncode:
            raise SystemExit(f"rlpanel {' '.join(args)} failed ({child.returncode}):\n{out[-2000:]}\n{err[-3000:]}")
    made: dict[str, list[str]] = {"group": [], "baseline": []}
    for run in sorted(p for p in runs_dir.iterdir() if (p / "status.json").is_file()):
        status = json.loads((run / "status.json").read_text(encoding="utf-8"))
        made["group" if status.get("group") else "baseline"].append(run.name)
    if len(made["group"]) != 2 or len(made["baseline"]) != 1:
        raise SystemExit(f"the runs folder holds {made}, not a group of two and a baseline")
    return made


def reach(window: QWidget, behind_more: list[str]) -> list[str]:
    """Each shown toolbar row whose » does not offer every control it hid; the controls it offers go to
    ``behind_more`` (the check checked something)."""
    bot, lost = Bot(), []
    for bar in window.findChildren(QToolBar):
        if bar.isVisible():
            try:
                behind_more += [f"{bar.objectName()}: {a.text()}" for a in assert_every_hidden_item_offered(bot, bar)]
            except AssertionError as error:
                lost.append(f"out of reach: {error}")
    return lost


def evening(runs_dir: Path) -> dict:
    from core.run.states import ACTIVE, TERMINAL
    from core.run.status import read_status

    made = train_runs_folder(runs_dir)
    app, window = open_settled(runs_dir)
    bot, answers = Bot(), Answerer()
    configure, tabs = window.configure, window.lazy_tabs.names()
    views: dict[str, list[str]] = {}
    behind_more: dict[str, list[str]] = {}

    def look(view: str, extra: Callable[[], list[str]] = list) -> None:
        settle(app)
        found = findings(window)
        for wait in (1.0, 2.0):  # a busy machine may not have laid out a label yet: a real cut is still there later
            if not found:
                break
            settle(app, wait)
            found = findings(window)
        views[view] = found + reach(window, behind_more.setdefault(view, [])) + extra()

    def show(name: str) -> None:
        window.tabs.setCurrentIndex(tabs.index(name))
        settle(app, 0.3)

    # Configure: the env, the preset from the list (opened, then folded by the pick), the budget
    choose_env(bot, configure, ENV)
    configure.presets_toggle.setChecked(True)
    settle(app)
    click_preset(configure, PRESET)
    wait_settled(bot, configure)
    type_into(bot, configure, "budget.total_timesteps", BUDGET)
    wait_settled(bot, configure)
    config = configure.current_config()
    picked = {"preset": configure.current_preset(), "algo": config and config.algo, "env": config and config.env.id,
              "timesteps": config and config.budget.total_timesteps, "errors": configure.errors()}
    look("configure", lambda: [f"the pick gave {picked}"] if (
        picked["preset"], picked["algo"], picked["env"], picked["errors"]) != (PRESET, "PPO", ENV, []) else [])

    # Launch, and the Monitor following the run until its collect/train bar shows
    window.run_actions.launch_action.trigger()  # each question asked is answered inside this call's dialog loop
    monitor = window.monitor
    bot.waitUntil(lambda: window.run_dir is not None and window.run_state in ACTIVE, timeout=WAIT_S * 1000)
    live = window.run_dir
    bot.waitUntil(lambda: (monitor.time_split.isVisible() and monitor.progress.value() > 0 and monitor.scalars.charts
                           and not monitor.held), timeout=WAIT_S * 1000)
    monitor.redraw()
    settle(app, 0.5)
    show("Monitor")

    def charts() -> list[str]:
        short = [f"{plot.title} is {plot.height()} px" for plot in [monitor.reward_plot, *monitor.gpu.widgets()]
                 if plot.isVisible() and plot.height() < MIN_CHART_PX]
        bar = monitor.time_split
        tall = [f"the collect/train bar takes {bar.height()} px"] if bar.height() > 1.5 * bar.fontMetrics().height() else []
        return chart_problems(monitor, "monitor") + short + tall

    look("monitor", charts)

    # Runs: the two seeds, the baseline and the live run
    show("Runs")
    window.runs.refresh()
    bot.waitUntil(lambda: len(window.runs.infos) >= 4, timeout=30_000)
    look("runs", lambda: columns_cut("runs", columns(window.runs.tree, window.runs.tree.header())))

    # Results: the group and the baseline ticked, the baseline chosen; then one row per group
    show("Results")
    results = window.results
    results.set_checked([*made["group"], *made["baseline"]])
    results.set_baseline(made["baseline"][0])
    wait_results(app, results)
    look("results", lambda: columns_cut("results", columns(results.table, results.table.horizontalHeader())))
    results.set_table_rows("launch group")
    wait_results(app, results)
    look("results-groups", lambda: columns_cut("groups", columns(results.table, results.table.horizontalHeader())))

    show("Queue")
    look("queue")

    # the evening ends: Stop, and the run's worker gone
    show("Monitor")
    window.run_actions.stop_action.trigger()
    bot.waitUntil(lambda: read_status(live).state in TERMINAL, timeout=WAIT_S * 1000)
    status = read_status(live)
    bot.waitUntil(lambda: not _alive(status.pid, status.pid_create_time), timeout=60_000)
    avail = window.screen().availableGeometry()
    return {"screen": [avail.width(), avail.height()], "window": [window.width(), window.height()], "views": views,
            "questions": answers.asked, "picked": picked,
            "behind_more": behind_more,
            "run": {"id": live.name, "state": status.state, "progress": monitor.progress.text(),
                    "exit_reason": status.exit_reason}}


def _alive(pid: int | None, create_time: float | None) -> bool:
    from core.util.procs import is_alive

    return pid is not None and is_alive(pid, create_time)


def main() -> None:
    print(json.dumps(evening(Path(sys.argv[1]))), flush=True)
    os._exit(0)  # the findings are out and the run has ended; the window's threads need no orderly end here


if __name__ == "__main__":
    main()
