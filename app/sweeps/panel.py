"""The Sweeps tab: pick a sweep of the runs folder (or run a sweep file), watch its trials.

The sweep runs in a detached runner (``core.sweep.runner``), as with ``rlpanel sweep run``:
closing the window does not stop it, and a new window shows it again. The study is read off the
GUI thread (``app.threads.background``) every two seconds while the sweep is active, importances included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.sweeps.charts import ImportancePlot, ObjectivePlot, ParallelCoordinates
from app.theme import MUTED, TRIAL_STATE_COLORS
from app.threads.background import run_in_background
from app.widgets.cluster_field import ClusterField
from app.widgets.name_combo import NameCombo
from app.widgets.wrap_label import wrap_long_words
from core.cluster.client import ClusterError
from core.config.presets import save_user_preset
from core.sweep.folder import SWEEP_ACTIVE, SweepFolder, sweep_names
from core.sweep.spec import load_sweep
from core.util.paths import configs_dir

POLL_MS = 2000
FIXED_COLUMNS = ["#", "State", "n", "Value ±", "95% interval"]
TAIL_COLUMNS = ["Per env", "Steps", "Run", "Reason"]
AXIS_KINDS = {"log_uniform": "log", "uniform": "number", "int": "number", "choice": "choice"}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def value_text(row: dict[str, Any]) -> str:
    """``412.3 ± 12.1``: a trial's value and standard error (the value alone for one run, or an IQM)."""
    if row.get("value") is None:
        return ""
    return f"{row['value']:.4g}" + (f" ± {row['se']:.3g}" if row.get("se") is not None else "")


def interval_text(row: dict[str, Any]) -> str:
    ci = row.get("ci95")
    return f"[{ci[0]:.4g}, {ci[1]:.4g}]" if ci else ""


def per_env_text(row: dict[str, Any]) -> str:
    """``CartPole-v1 412 (0.81), Acrobot-v1 -95 (0.98)``: each env's raw mean and its normalised score."""
    return ", ".join(f"{env} {v['mean']:.4g} ({v['normalised']:.2f})" for env, v in (row.get("per_env") or {}).items()
                     if v.get("mean") is not None and v.get("normalised") is not None)


class SweepsPanel(QWidget):
    """Signals: ``run_activated(Path)`` on double-click of a trial with a run; ``report_changed(dict)``."""

    run_activated = Signal(object)
    report_changed = Signal(object)

    def __init__(self, runs_dir: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.runs_dir = Path(runs_dir)
        self.report: dict[str, Any] | None = None
        self._loading = False
        self._last_stamp: tuple[int, ...] = ()

        self.sweep_box = NameCombo(15)  # the user's sweep names: the widest tab is not made wider by one
        self.sweep_box.currentTextChanged.connect(lambda _t: self.refresh())
        self.run_button = QPushButton("Run sweep file…")
        self.run_button.setToolTip("Check a sweep file and start it in a detached runner (rlpanel sweep run)")
        self.run_button.clicked.connect(self._choose_file)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("No more trials; running trials stop gracefully and resume with the sweep")
        self.stop_button.clicked.connect(self.stop)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue a stopped or crashed sweep where it was")
        self.resume_button.clicked.connect(self.resume)
        self.save_button = QPushButton("Save best as preset…")
        self.save_button.clicked.connect(self._ask_preset_name)
        self.state_label = wrap_long_words(QLabel())  # the user's sweep name, the file it started
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.table = QTableWidget(0, len(FIXED_COLUMNS) + len(TAIL_COLUMNS))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.cellDoubleClicked.connect(self._activated)
        self.objective = ObjectivePlot()
        self.importance = ImportancePlot()
        self.parallel = ParallelCoordinates()

        top = QHBoxLayout()
        top.addWidget(QLabel("Sweep"))
        top.addWidget(self.sweep_box)
        for button in (self.run_button, self.stop_button, self.resume_button, self.save_button):
            top.addWidget(button)
        top.addStretch(1)
        grid = QGridLayout()
        grid.addWidget(self._titled("Trials", self.table), 0, 0, 1, 2)
        grid.addWidget(self._titled("Objective over trials", self.objective), 1, 0)
        grid.addWidget(self._titled("Parameter importance", self.importance), 1, 1)
        grid.addWidget(self._titled("Parallel coordinates", self.parallel), 2, 0, 1, 2)
        for row, stretch in enumerate((3, 2, 3)):
            grid.setRowStretch(row, stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.cluster = ClusterField()
        layout.addLayout(top)
        layout.addWidget(self.cluster)
        layout.addWidget(self.state_label)
        layout.addLayout(grid, 1)

        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        self.list_sweeps()

    @staticmethod
    def _titled(title: str, widget: QWidget) -> QWidget:
        box = QWidget()
        inner = QVBoxLayout(box)
        inner.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"<b>{title}</b>")
        inner.addWidget(label)
        inner.addWidget(widget, 1)
        return box

    # --- reading ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.sweep_box.currentText()

    def list_sweeps(self, select: str | None = None) -> None:
        names = sweep_names(self.runs_dir)
        current = select or self.name
        self.sweep_box.blockSignals(True)
        self.sweep_box.clear()
        self.sweep_box.addItems(names)
        if current in names:
            self.sweep_box.setCurrentText(current)
        self.sweep_box.blockSignals(False)
        self.refresh()

    def _tick(self) -> None:
        if not self.isVisible():
            return
        if sweep_names(self.runs_dir) != [self.sweep_box.itemText(i) for i in range(self.sweep_box.count())]:
            self.list_sweeps()  # a sweep started by rlpanel sweep run, or another window
            return
        stamp = self._stamp()
        if self.report is None or self.report.get("state") in (*SWEEP_ACTIVE, "not started") or stamp != self._last_stamp:
            self._last_stamp = stamp
            self.refresh()

    def _stamp(self) -> tuple[int, ...]:
        """When the sweep's state and study last changed (a resume from the command line shows here too)."""
        folder = SweepFolder(self.runs_dir, self.name)
        out = []
        for path in (folder.state, folder.database):
            try:
                out.append(path.stat().st_mtime_ns)
            except OSError:
                out.append(0)
        return tuple(out)

    def refresh(self) -> None:
        """Read the chosen sweep off the GUI thread; the answer redraws the tab."""
        name = self.name
        if not name:
            self.report = None
            self._show({"name": "", "state": "", "trials": [], "space": {}, "importances": {}})
            example = configs_dir() / "sweeps"  # shipped with rlpanel, in the installed package for a pip user
            self.state_label.setText(f"No sweep in this runs folder yet. Run sweep file… opens the example sweeps in "
                                     f"{example} (ppo-cartpole-lr.yaml: PPO's learning rate on CartPole); copy one to "
                                     "change it, or run it with: rlpanel sweep run FILE")
            return
        if self._loading:
            return
        self._loading = True
        root = self.runs_dir

        def done(report: dict[str, Any]) -> None:
            self._loading = False
            if report.get("name") == self.name:
                self.report = report
                self._show(report)
                self.report_changed.emit(report)

        def failed(message: str) -> None:
            self._loading = False
            self.state_label.setText(f"sweep {name}: {message}")

        def read() -> dict[str, Any]:
            from core.sweep.control import sweep_status  # Optuna loads on first use, not with the window

            return sweep_status(root, name, importances=True)

        run_in_background(read, done, failed)

    def _show(self, report: dict[str, Any]) -> None:
        params = list(report.get("space", {}))
        headers = [*FIXED_COLUMNS, *params, *TAIL_COLUMNS]
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(report["trials"]))
        for r, row in enumerate(report["trials"]):
            state = "waiting" if row.get("waiting") and not row.get("run_id") else row["state"]
            runs = row.get("runs") or {}
            cells = [row["number"], state, row.get("n") or None, value_text(row), interval_text(row),
                     *(row["params"].get(p) for p in params), per_env_text(row), row.get("steps"),
                     row.get("run_id") if len(runs) < 2 else f"{row.get('run_id')} +{len(runs) - 1}",
                     row.get("reason") or row.get("waiting")]
            for c, value in enumerate(cells):
                item = QTableWidgetItem(_text(value))
                if c == 1:
                    item.setForeground(_color(state))
                self.table.setItem(r, c, item)
        self.table.setColumnHidden(len(FIXED_COLUMNS) + len(params), not any(row.get("per_env") for row in report["trials"]))
        self.table.resizeColumnsToContents()
        self.objective.show_report(report)
        self.importance.show_importances(report.get("importances") or {})
        self.parallel.show_report(report, {p: AXIS_KINDS.get(k, "number") for p, k in report.get("space", {}).items()})
        self._update_buttons(report)

    def _update_buttons(self, report: dict[str, Any]) -> None:
        state = report.get("state", "")
        self.stop_button.setEnabled(state in (*SWEEP_ACTIVE, "crashed"))
        self.resume_button.setEnabled(state in ("stopped", "crashed", "failed"))
        self.save_button.setEnabled(bool(report.get("best")))
        if not report.get("name"):
            return
        counts: dict[str, int] = {}
        for row in report["trials"]:
            counts[row["state"]] = counts.get(row["state"], 0) + 1
        best = report.get("best")
        best_text = f"best #{best['number']}: {best_figure(best)}" if best else "no trial completed yet"
        if best and best.get("runner_up"):
            best_text += f"; runner-up #{best['runner_up']['number']}: {best_figure(best['runner_up'])}; {best['separation']}"
        done = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no trials yet"
        where = f" On the Ray cluster {report['ray'].get('address')}." if report.get("ray") else ""
        self.state_label.setText(f"{report['name']}: {state} — {done} of {report.get('n_trials')}; {best_text}. "
                                 f"Storage: {report.get('storage')}{where}")

    def _activated(self, row: int, _column: int) -> None:
        if self.report and row < len(self.report["trials"]):
            run_id = self.report["trials"][row].get("run_id")
            if run_id:
                self.run_activated.emit(self.runs_dir / run_id)

    # --- actions ------------------------------------------------------------------------------

    def _choose_file(self) -> None:
        start = configs_dir() / "sweeps"
        path, _ = QFileDialog.getOpenFileName(self, "Run a sweep file", str(start), "Sweep files (*.yaml *.yml)")
        if path:
            self.run_file(Path(path))

    def run_file(self, path: Path) -> None:
        """Check the file and start its sweep off the GUI thread; errors name the field."""
        root = self.runs_dir
        try:
            cluster = self.cluster.target()
        except ClusterError as exc:
            self._say(f"Ray cluster: {exc}")
            return

        def start() -> str:
            from core.sweep.control import start_sweep

            spec = load_sweep(path)
            start_sweep(root, spec, reap=True, cluster=cluster)
            return spec.name

        self.state_label.setText(f"starting {path.name}…")
        run_in_background(start, lambda name: self.list_sweeps(select=name), self._say)

    def stop(self) -> None:
        from core.sweep.control import stop_sweep

        name, root = self.name, self.runs_dir
        run_in_background(lambda: stop_sweep(root, name), lambda _s: self.refresh(), self._say)

    def resume(self) -> None:
        from core.sweep.control import resume_sweep

        name, root = self.name, self.runs_dir
        run_in_background(lambda: resume_sweep(root, name, reap=True), lambda _s: self.refresh(), self._say)

    def _say(self, message: str) -> None:
        self.state_label.setText(message)

    def _ask_preset_name(self) -> None:
        if not self.report or not self.report.get("best"):
            return
        name, ok = QInputDialog.getText(self, "Save best as preset", "Preset name:", text=f"{self.name}-best")
        if ok and name:
            try:
                path = self.save_best_as_preset(name)
            except (ValueError, OSError) as exc:
                self._say(str(exc))
                return
            self._say(f"saved the best trial as preset {name} ({path})")

    def save_best_as_preset(self, name: str) -> Path:
        """Write the best trial's settings as a user preset over the sweep's base preset."""
        if not self.report or not self.report.get("best"):
            raise ValueError("no trial has completed yet: nothing to save")
        from core.sweep.control import read_spec

        best = self.report["best"]
        spec = read_spec(SweepFolder(self.runs_dir, self.name))
        data = spec.preset_data(best["params"])
        description = (f"best of sweep {spec.name}: trial #{best['number']}, {spec.objective.metric} "
                       f"{best_figure(best)}" + (f"; {best['separation']}" if best.get("separation") else ""))
        return save_user_preset(name, data, description=description, base=spec.base.preset)

    def on_shown(self) -> None:
        """Nothing to do: the trials are read on its own timer."""

    def on_closing(self) -> None:
        """Nothing to stop: a sweep goes on without the window."""


def best_figure(row: dict[str, Any]) -> str:
    """``412.3 ± 12.1, 95 % CI [385.6, 439.0], n=3``: what the state line and a saved preset say of a trial."""
    interval = interval_text(row)
    return value_text(row) + (f", 95 % CI {interval}" if interval else "") + (f", n={row['n']}" if row.get("n") else "")


def _color(state: str) -> Any:
    from PySide6.QtGui import QColor

    return QColor(TRIAL_STATE_COLORS.get(state, MUTED))
