"""The Results tab: tick runs, overlay their reward curves, read and export the results table.

The table is ``core.results.table`` under the same columns as ``rlpanel export``; the Export button
writes it with ``core.results.export`` in the format of the file type chosen in the save dialog.
The runs list is filtered and grouped by algorithm, env and preset (``RunPicker``); the baseline
is drawn on the overlay as a flat band.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.plots.overlay import OverlayPlot
from app.results.columns import ColumnChooser
from app.results.curve_mode import CurveModeControls
from app.results.loader import ResultsLoader
from app.results.model import ResultsTableModel, sorting_proxy
from app.results.morning import MorningReportDialog
from app.results.run_names import BASELINE_NAME_PX, baseline_texts, run_label
from app.results.save_path import PLOT_FILTERS, TABLE_FILTERS, ask_save_path
from app.settings import GRID_SETTING, get_setting, set_setting
from app.theme import state_color
from app.widgets.name_combo import NameCombo
from app.widgets.toolbar import SEPARATOR, STRETCH, Labelled, panel_toolbar
from app.widgets.wrap_label import wrap_long_words
from core.results.curves import RewardCurve
from core.results.export import SUFFIXES, export, export_table
from core.results.group_table import GroupTable, group_table
from core.results.grouping import group_runs
from core.results.table import ResultRow, results
from core.run.store import RunInfo, RunStore

ID_ROLE = Qt.ItemDataRole.UserRole
GROUPS = {"none": None, "algorithm": "algo", "env": "env", "preset": "preset"}
# the table's rows: runs, or groups of seeds
ALL = "all"


class ResultsPanel(QWidget):
    def __init__(self, runs_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = RunStore(Path(runs_dir))
        self.rows: list[ResultRow] = []
        self.groups: GroupTable | None = None  # the table of groups of seeds, when the table shows groups
        self._infos: dict[str, RunInfo] = {}
        # run folders are read in a background thread; only the newest request's answer is shown
        self.loader = ResultsLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self._request_id = self._shown_id = 0
        self._request: tuple[list[Path], Path | None] = ([], None)
        self._ticked_hidden: set[str] = set()  # ticked runs a filter hides now: ticked again when shown
        left, bar, right = self._build_run_list(), self._build_controls(), self._build_plot_and_table()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 900])
        layout = QVBoxLayout(self)
        layout.addWidget(bar)
        layout.addWidget(self.splitter, 1)
        self.refresh()

    def _build_run_list(self) -> QWidget:
        """The left side: the filters, Group by, the runs to tick and their All, None and Refresh buttons."""
        self.run_list = QListWidget()
        self.run_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.run_list.itemChanged.connect(lambda _item: self.update_results())
        all_button, none_button, refresh_button = QPushButton("All"), QPushButton("None"), QPushButton("Refresh")
        all_button.setToolTip("Tick every run the filters show")
        all_button.clicked.connect(lambda: self.set_checked(self.shown_ids()))
        none_button.clicked.connect(lambda: self.set_checked([]))
        refresh_button.clicked.connect(self.refresh)
        self.filters: dict[str, QComboBox] = {}
        filters = QGridLayout()
        for row, (key, label) in enumerate((("algo", "Algorithm"), ("env", "Env"), ("preset", "Preset"))):
            combo = NameCombo(12)  # the runs' env ids (a custom env's module:Class) and preset names: any length
            combo.addItem(ALL)
            combo.setToolTip(f"Only the runs of this {label.lower()}")
            combo.currentTextChanged.connect(lambda _t: self._fill_list())
            self.filters[key] = combo
            filters.addWidget(QLabel(label), row, 0)
            filters.addWidget(combo, row, 1)
        self.group_combo = QComboBox()
        self.group_combo.addItems(list(GROUPS))
        self.group_combo.setToolTip("Group the runs (and the table's rows) by algorithm, env or preset")
        self.group_combo.currentTextChanged.connect(self._regroup)
        filters.addWidget(QLabel("Group by"), 3, 0)
        filters.addWidget(self.group_combo, 3, 1)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(filters)
        lv.addWidget(QLabel("Runs to compare"))
        lv.addWidget(self.run_list, 1)
        buttons = QHBoxLayout()
        for b in (all_button, none_button, refresh_button):
            buttons.addWidget(b)
        lv.addLayout(buttons)
        return left

    def _build_controls(self) -> QWidget:
        """The toolbar across the tab: Morning report, Export, the baseline, the x axis, Save plot, CO2."""
        self.baseline_combo = QComboBox()
        self.baseline_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.baseline_combo.setToolTip("Every run's final mean reward is compared with this run's (each run's id: "
                                       "in its entry's tooltip)")
        self.baseline_combo.currentIndexChanged.connect(lambda _i: self.update_results())
        self.x_combo = QComboBox()
        self.x_combo.addItem("Timesteps", "step")
        self.x_combo.addItem("Wall time", "time")
        self.x_combo.currentIndexChanged.connect(self._x_mode_changed)
        self.grid_spin = QDoubleSpinBox()
        self.grid_spin.setRange(0, 2000)
        self.grid_spin.setDecimals(0)
        self.grid_spin.setSuffix(" g/kWh")
        self.grid_spin.setSpecialValueText("off")
        self.grid_spin.setValue(get_setting(GRID_SETTING, 0.0))
        self.grid_spin.setToolTip("The grid's CO2 intensity (g CO2 per kWh; e.g. 350): the table and the exports add a CO2 "
                                  "estimate from each run's GPU energy. 0: no estimate")
        self.grid_spin.valueChanged.connect(self._grid_changed)
        self.morning_button = QPushButton("Morning report…")
        self.morning_button.setToolTip("Every run and queue job since a time (18:00): state and why, rewards, the env's "
                                       "measures against the baseline, energy, failures with their logs")
        self.morning_button.clicked.connect(self.show_morning_report)
        self.export_button = QPushButton("Export table…")
        self.export_button.clicked.connect(self.export_table)
        self.save_plot_button = QPushButton("Save plot…")
        self.save_plot_button.clicked.connect(self.save_plot)
        # across the whole tab; what a narrow window has no room for goes behind », the least used last
        bar = panel_toolbar("resultsControls", (
            self.morning_button, self.export_button, SEPARATOR, Labelled("Baseline", self.baseline_combo),
            Labelled("x axis", self.x_combo), STRETCH, self.save_plot_button, Labelled("CO2", self.grid_spin)))
        return bar

    def _build_plot_and_table(self) -> QWidget:
        """The right side: Seeds and Curve over the overlay plot, the results table under it, the status line."""
        self.plot = OverlayPlot()
        self.curve_mode = CurveModeControls(self.plot)  # each run, or one curve and table row per group of seeds
        self.curve_mode.grouping_changed.connect(self._regroup_seeds)
        self.model = ResultsTableModel(self)
        self.proxy = sorting_proxy(self.model, self)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the runs' own order (baseline first) until a header is clicked
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.verticalHeader().setVisible(False)
        self.column_chooser = ColumnChooser(self.table)  # the header's right click; the name and figures come first
        self.status = wrap_long_words(QLabel())  # "Wrote the table to <path>"

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.curve_mode)  # over the plot it acts on (the toolbar has no room left at 1280 px)
        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.addWidget(self.plot)
        self.right_split.addWidget(self.table)
        self.right_split.setSizes([340, 220])
        rv.addWidget(self.right_split, 1)
        status_row = QHBoxLayout()  # the line that says how many runs did not finish, and the box that counts them
        status_row.addWidget(self.status, 1)
        status_row.addWidget(self.curve_mode.unfinished_box, 0, Qt.AlignmentFlag.AlignTop)
        rv.addLayout(status_row)  # not beside Seeds and Curve: at 1280 px that row had no room for it (issue 44)
        return right

    # --- runs -------------------------------------------------------------------------------------

    def _x_mode_changed(self, _index: int) -> None:
        self.plot.set_x_mode(self.x_combo.currentData())

    def _regroup(self, _group: str) -> None:
        self._fill_list()
        self.update_results()

    def checked_ids(self) -> list[str]:
        """The ticked runs the filters show (in the list's order)."""
        items = (self.run_list.item(i) for i in range(self.run_list.count()))
        return [it.data(ID_ROLE) for it in items
                if it.data(ID_ROLE) and not it.isHidden() and it.checkState() == Qt.CheckState.Checked]

    def shown_ids(self) -> list[str]:
        items = (self.run_list.item(i) for i in range(self.run_list.count()))
        return [it.data(ID_ROLE) for it in items if it.data(ID_ROLE) and not it.isHidden()]

    def set_filter(self, key: str, value: str | None) -> None:
        """Show only the runs whose ``key`` (algo, env, preset) is ``value`` (None: all)."""
        self.filters[key].setCurrentText(value or ALL)

    def set_table_rows(self, rows: str) -> None:
        """``each run``, ``launch group`` or ``config``: what one row of the table (and one curve) is."""
        self.curve_mode.by_combo.setCurrentText(rows)

    def _regroup_seeds(self) -> None:
        """The seed groups changed: the table's rows (and the status line) follow."""
        self.update_results()

    def set_group(self, by: str) -> None:
        self.group_combo.setCurrentText(by)

    def _matches(self, info: RunInfo) -> bool:
        return all(combo.currentText() == ALL or str(getattr(info, key) or "-") == combo.currentText()
                   for key, combo in self.filters.items())

    def _group_of(self, info: RunInfo) -> str | None:
        key = GROUPS[self.group_combo.currentText()]
        return None if key is None else str(getattr(info, key) or "-")

    def _fill_list(self, update: bool = True) -> None:
        """The runs list under the filters, grouped under a header per group (ticks survive)."""
        checked = set(self.checked_ids()) | self._ticked_hidden
        infos = list(self._infos.values())
        self._ticked_hidden = {i.id for i in infos if i.id in checked and not self._matches(i)}
        if GROUPS[self.group_combo.currentText()] is not None:
            infos.sort(key=lambda i: (self._group_of(i) or "").lower())  # stable: newest first within a group
        self.run_list.blockSignals(True)
        self.run_list.clear()
        group = None
        for info in infos:
            if not self._matches(info):
                continue
            if self._group_of(info) is not None and self._group_of(info) != group:
                group = self._group_of(info)
                header = QListWidgetItem(f"{self.group_combo.currentText()}: {group}")
                header.setFlags(Qt.ItemFlag.ItemIsEnabled)
                font = header.font()
                font.setBold(True)
                header.setFont(font)
                self.run_list.addItem(header)
            item = QListWidgetItem(run_label(info))
            item.setData(ID_ROLE, info.id)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if info.id in checked else Qt.CheckState.Unchecked)
            item.setToolTip(f"{info.id}\n{info.algo} on {info.env}\n{info.state}, {info.steps_text(' of ')} steps"
                            + (f"\ntags: {' '.join(info.tags)}" if info.tags else ""))
            if info.state != "finished":  # a finished run in the plain text colour, others by state
                item.setForeground(QBrush(state_color(info.state)))
            self.run_list.addItem(item)
        self.run_list.blockSignals(False)
        if update:
            self.update_results()

    def _fill_filters(self, infos: list[RunInfo]) -> None:
        for key, combo in self.filters.items():
            values = sorted({str(getattr(i, key) or "-") for i in infos}, key=str.lower)
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(ALL)
            combo.addItems(values)
            combo.setCurrentText(current if current in values else ALL)
            combo.blockSignals(False)

    def set_checked(self, run_ids: list[str]) -> None:
        wanted = set(run_ids)
        self._ticked_hidden = set()
        self.run_list.blockSignals(True)
        for i in range(self.run_list.count()):
            item = self.run_list.item(i)
            if item.data(ID_ROLE):
                item.setCheckState(Qt.CheckState.Checked if item.data(ID_ROLE) in wanted else Qt.CheckState.Unchecked)
        self.run_list.blockSignals(False)
        self.update_results()

    def baseline_id(self) -> str | None:
        run_id = self.baseline_combo.currentData()  # "none" holds None
        return run_id if isinstance(run_id, str) else None

    def set_baseline(self, run_id: str | None) -> None:
        index = self.baseline_combo.findData(run_id) if run_id else 0
        self.baseline_combo.setCurrentIndex(max(index, 0))

    def refresh(self) -> None:
        """Read the runs folder again; ticks and the baseline survive when their runs still exist."""
        baseline = self.baseline_id()
        infos = [i for i in self.store.list() if not i.broken]  # broken folders are listed (why) in the Runs tab
        self._infos = {i.id: i for i in infos}
        self._fill_filters(infos)
        self._fill_list(update=False)  # the results are read once, after the baseline below
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        self.baseline_combo.addItem("none", None)
        metrics = self.baseline_combo.fontMetrics()
        texts = baseline_texts(infos, lambda name: metrics.elidedText(name, Qt.TextElideMode.ElideRight, BASELINE_NAME_PX))
        for info, text in zip(infos, texts, strict=True):  # the id and the whole label in the entry's tooltip
            self.baseline_combo.addItem(text, info.id)
            self.baseline_combo.setItemData(self.baseline_combo.count() - 1, f"{info.id}\n{run_label(info)}",
                                            Qt.ItemDataRole.ToolTipRole)
        self.set_baseline(baseline if baseline in self._infos else None)
        self.baseline_combo.blockSignals(False)
        self.update_results()

    @property
    def loading(self) -> bool:
        """A request for the ticked runs is still being read."""
        return self._shown_id != self._request_id

    def _grid_changed(self, value: float) -> None:
        set_setting(GRID_SETTING, value)
        self.update_results()

    def update_results(self) -> None:
        """Read the ticked runs and the baseline (in the background) and show them when read."""
        ids = [i for i in self.checked_ids() if i in self._infos]
        paths = [self._infos[i].path for i in ids]
        base = self.baseline_id()
        base_path = self._infos[base].path if base in self._infos else None
        self._request_id += 1
        self._request = (paths, base_path)
        wanted = paths + ([base_path] if base_path is not None and base_path not in paths else [])
        if not wanted:
            self._on_loaded(self._request_id, {})
            return
        self.status.setText(f"Reading {len(wanted)} run(s)…")
        self.loader.request(self._request_id, wanted)

    def _on_loaded(self, request_id: int, read: dict[str, tuple[ResultRow, RewardCurve] | str]) -> None:
        if request_id != self._request_id:
            return  # the ticks changed since: a newer answer is coming
        self._shown_id = request_id
        errors = [v for v in read.values() if isinstance(v, str)]
        ok = {p: v for p, v in read.items() if not isinstance(v, str)}
        paths, base_path = self._request
        paths = [p for p in paths if str(p) in ok]
        if base_path is not None and str(base_path) not in ok:
            base_path = None
        # fresh copies: results() marks the baseline and sets deltas on the rows it gets
        self.rows = results(paths, baseline=base_path, row=lambda d: replace(ok[str(d)][0]),
                            grid_g_per_kwh=self.grid_spin.value() or None) if (paths or base_path) else []
        key = GROUPS[self.group_combo.currentText()]
        if key is not None:  # grouped: the baseline first, then group by group (stable: the list's order within)
            self.rows.sort(key=lambda r: (not r.is_baseline, str(getattr(r, key) or "-").lower()))
        self._show_table(paths, base_path)
        self.curve_mode.show_runs(paths, [ok[str(p)][1] for p in paths])
        base = next((r for r in self.rows if r.is_baseline), None)
        level = (base.eval_mean_reward, base.eval_std_reward) if base and base.eval_mean_reward is not None else (
            (base.final_mean_reward, base.final_std_reward) if base else (None, None))
        self.plot.set_baseline(level[0], level[1], f"baseline {base.name or base.run_id}" if base else "baseline")
        if not self.rows:
            text = "Tick runs on the left to overlay their curves and fill the table."
        else:
            marked = sum(r.marked for r in self.rows)
            text = f"{len(self.rows)} runs" + (f"; {marked} did not finish (marked †)" if marked else "")
            if self.groups is not None:
                text = f"{len(self.groups.rows)} groups of {text}; each run's figure: {self.groups.protocol['metric']}"
                left = sum(len(g.left_out) for g in self.groups.rows)
                text += f"; {left} unfinished left out of the statistics (tick Count unfinished to count them)" if left else ""
        if errors:
            text += "  Could not read " + "; ".join(errors)
        self.status.setText(text)

    def _show_table(self, paths: list[Path], base_path: Path | None) -> None:
        """The rows of runs, or of their groups of seeds (the baseline run's group is the baseline)."""
        by = self.curve_mode.by()
        self.groups = None
        if by is None or not self.rows:
            self.model.set_rows(self.rows)
        else:
            every = ([base_path] if base_path is not None and base_path not in paths else []) + list(paths)
            self.groups = group_table(self.rows, group_runs(every, by), by, [base_path] if base_path else None,
                                      self.curve_mode.include_unfinished())
            self.model.set_rows(self.groups.rows, self.groups.reading)
        self.column_chooser.apply()

    def close_loader(self) -> None:
        """Stop the reading thread (the window calls this when it closes)."""
        self.loader.close()

    def on_shown(self) -> None:
        """The runs folder read again each time the tab is shown: runs have started and ended meanwhile."""
        self.refresh()

    def on_closing(self) -> None:
        self.close_loader()

    # --- export -----------------------------------------------------------------------------------

    def show_morning_report(self) -> MorningReportDialog:
        dialog = MorningReportDialog(self.store.root, self)
        dialog.show()
        dialog.refresh()
        return dialog

    def export_table(self) -> Path | None:
        if not self.rows:
            self.status.setText("Nothing to export: tick runs first.")
            return None
        path = ask_save_path(self, "Export results table", TABLE_FILTERS, "results/export_dir", "results", set(SUFFIXES))
        if path is None:
            return None
        try:
            if self.groups is not None:
                export_table(self.groups, path=path)
            else:
                export(self.rows, path=path)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Export failed", f"Could not write {path}:\n{exc}")
            return None
        what = f"{len(self.groups.rows)} groups" if self.groups is not None else f"{len(self.rows)} runs"
        self.status.setText(f"Wrote {what} to {path}")
        return path

    def save_plot(self) -> Path | None:
        """The overlay as PNG or SVG; the dialog starts in the (first) ticked run's folder."""
        ticked = [self._infos[i].path for i in self.checked_ids() if i in self._infos]
        path = ask_save_path(self, "Save plot", PLOT_FILTERS, "results/plot_dir", "reward-curves",
                              start=ticked[0] if ticked else None)
        if path is None:
            return None
        try:
            if path.suffix.lower() == ".svg":
                self.plot.save_svg(path)
            else:
                self.plot.save_png(path)
        except (OSError, ValueError, RuntimeError) as exc:
            QMessageBox.warning(self, "Save failed", f"Could not write {path}:\n{exc}")
            return None
        self.status.setText(f"Saved the plot to {path}")
        return path
