"""The plan being built: jobs in order, what each runs after and with which seeds, parallel jobs, on_failure,
YAML files.

A job's Seeds (beside its "runs after") makes it a group: one run per seed, run a few at a time within the
plan's parallel jobs (``core.queue.plan.PlanJob.seeds``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.configure.model import ConfigModel
from app.queue.jobs import (
    NAME_RE,
    baseline_job,
    default_job_name,
    env_text,
    job_budget,
    job_changes,
    job_from_config,
    job_seeds,
)
from app.queue.status_view import fit_columns
from app.theme import error_color
from app.widgets.elided_label import ElidedLabel
from app.widgets.toolbar import SEPARATOR, STRETCH, Labelled, panel_toolbar
from app.widgets.tree import top_items
from app.widgets.wrap_label import wrap_long_words
from core.config.schema import BudgetParams, RunConfig
from core.queue.plan import Plan, PlanJob, save_plan
from core.util.yaml_reader import read_yaml

COLUMNS = ["Job", "Algo", "Env", "Budget", "Seeds", "Preset", "Changes", "After"]


class PlanEditor(QWidget):
    """Build a plan; ``changed()`` after every edit. ``config`` (the window's) is "the current config"."""

    changed = Signal()

    def __init__(self, config: ConfigModel | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.config = config
        self.jobs: list[PlanJob] = []
        self.path: Path | None = None  # the file the plan was last saved to or loaded from
        self._saved: dict[str, Any] | None = None
        self.message = wrap_long_words(QLabel())  # "Saved <path>", "Cannot load <path>", a job's name
        self._build_buttons(config is not None)
        split = self._build_jobs_and_after()
        self._build_options()
        # rows that never squeeze a button: what a narrow window has no room for goes behind »
        buttons = panel_toolbar("planButtons", (
            self.add_config_button, self.add_baseline_button, self.remove_button, self.up_button, self.down_button,
            SEPARATOR, self.edit_button, self.replace_button))
        options = panel_toolbar("planOptions", (
            Labelled("Parallel jobs", self.parallel), SEPARATOR, Labelled("On failure", self.on_failure), STRETCH,
            self.load_button, self.save_button))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(buttons)
        layout.addWidget(split, 1)
        layout.addWidget(options)
        layout.addWidget(self.message)
        self._refresh()

    def _build_buttons(self, has_config: bool) -> None:
        """The jobs' buttons (add, remove, move, to and from Configure) and Load and Save."""
        self.add_config_button = QPushButton("Add current config")
        self.add_config_button.setToolTip("Add the Configure tab's preset and changes as a job")
        self.add_config_button.setEnabled(has_config)
        self.add_baseline_button = QPushButton("Add baseline")
        self.add_baseline_button.setToolTip("Add a random-policy baseline for the current env, playing the Configure "
                                            "tab's Baseline episodes")
        self.edit_button = QPushButton("Load into Configure")
        self.edit_button.setToolTip("Show the selected job's preset and changes in the Configure tab, to edit them")
        self.replace_button = QPushButton("Replace with current config")
        self.replace_button.setToolTip("The selected job takes the Configure tab's preset and changes (its name and "
                                       "what it runs after stay)")
        self.remove_button = QPushButton("Remove")
        self.up_button = QPushButton("Move up")
        self.down_button = QPushButton("Move down")
        self.load_button = QPushButton("Load plan…")
        self.save_button = QPushButton("Save plan…")
        self.add_config_button.clicked.connect(self.add_current_config)
        self.add_baseline_button.clicked.connect(self.add_baseline)
        self.edit_button.clicked.connect(self.load_selected_into_configure)
        self.replace_button.clicked.connect(self.replace_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.load_button.clicked.connect(lambda: (path := self.ask_open_path()) and self.load(path))
        self.save_button.clicked.connect(lambda: (path := self.ask_save_path()) and self.save(path))

    def _build_jobs_and_after(self) -> QSplitter:
        """The jobs' table beside the selected job's seeds and the jobs it runs after."""
        self.table = QTreeWidget()
        self.table.setHeaderLabels(COLUMNS)
        self.table.setRootIsDecorated(False)
        self.table.setAlternatingRowColors(True)
        self.table.header().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._show_after)
        self.after_label = ElidedLabel("Runs after")  # "<job name> runs after": a long name elides
        self.after_list = QListWidget()
        self.after_list.setToolTip("Tick the jobs that must have ended before this one starts")
        self.after_list.itemChanged.connect(self._after_edited)
        self.seeds_edit = QLineEdit()
        self.seeds_edit.setPlaceholderText("1")
        self.seeds_edit.setToolTip("Run the selected job with seeds, as a group: 5 is seeds 0-4, 3,7,11 those seeds, "
                                   "1 (or empty) a single run. Its runs go a few at a time, within Parallel jobs; a job "
                                   "after it waits for all of them")
        self.seeds_edit.editingFinished.connect(self._seeds_edited)
        seeds_row = QHBoxLayout()
        seeds_row.addWidget(QLabel("With seeds"))
        seeds_row.addWidget(self.seeds_edit, 1)
        after_box = QWidget()
        after_layout = QVBoxLayout(after_box)
        after_layout.setContentsMargins(0, 0, 0, 0)
        after_layout.addLayout(seeds_row)
        after_layout.addWidget(self.after_label)
        after_layout.addWidget(self.after_list, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(after_box)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        return split

    def _build_options(self) -> None:
        self.parallel = QSpinBox()
        self.parallel.setRange(1, 64)
        self.parallel.setToolTip("Jobs at once (a job also waits while its fit estimate does not fit next to the running ones)")
        self.on_failure = QComboBox()
        self.on_failure.addItems(["continue", "stop"])
        self.on_failure.setToolTip("When a job fails: start the remaining jobs anyway, or skip them")
        self.parallel.valueChanged.connect(self._edited)
        self.on_failure.currentTextChanged.connect(self._edited)

    # --- the plan ------------------------------------------------------------------------------

    def plan_raw(self) -> dict[str, Any]:
        """The plan as a file holds it (validate with ``core.queue.parse_plan``)."""
        return {"parallel": self.parallel.value(), "on_failure": self.on_failure.currentText(),
                "jobs": [job.model_dump(mode="json") for job in self.jobs]}

    def set_plan(self, plan: Plan) -> None:
        self.jobs = [job.model_copy(deep=True) for job in plan.jobs]
        self.parallel.blockSignals(True)
        self.on_failure.blockSignals(True)
        self.parallel.setValue(plan.parallel)
        self.on_failure.setCurrentText(plan.on_failure)
        self.parallel.blockSignals(False)
        self.on_failure.blockSignals(False)
        self._refresh()
        self._edited()

    def saved_path(self) -> Path | None:
        """The plan's file when it holds exactly what the editor shows (else None)."""
        return self.path if self.path is not None and self._saved == self.plan_raw() else None

    def add_job(self, job: PlanJob) -> None:
        self.jobs.append(job)
        self._refresh(select=len(self.jobs) - 1)
        self._edited()

    def remove_selected(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        gone = self.jobs.pop(row).name
        for job in self.jobs:  # nothing waits for a job that is no longer in the plan
            if gone in job.after:
                job.after = [a for a in job.after if a != gone]
        self._refresh(select=min(row, len(self.jobs) - 1))
        self._edited()

    def move_selected(self, delta: int) -> None:
        row = self.selected_row()
        if row is None or not 0 <= row + delta < len(self.jobs):
            return
        self.jobs[row], self.jobs[row + delta] = self.jobs[row + delta], self.jobs[row]
        self._refresh(select=row + delta)
        self._edited()

    def set_after(self, name: str, after: list[str]) -> None:
        job = next(j for j in self.jobs if j.name == name)
        job.after = [j.name for j in self.jobs if j.name in after]  # in plan order
        self._refresh(select=self.jobs.index(job))
        self._edited()

    def select(self, name: str) -> None:
        self._refresh(select=[j.name for j in self.jobs].index(name))

    def selected_row(self) -> int | None:
        items = self.table.selectedItems()
        return self.table.indexOfTopLevelItem(items[0]) if items else None

    # --- adding from the Configure tab ---------------------------------------------------------

    def add_current_config(self) -> bool:
        config = self._valid_config()
        if config is None or self.config is None:
            return False
        name = self.ask_job_name(default_job_name(config.algo, env_text(config), self.names()))
        if not name:
            return False
        self.add_job(job_from_config(name, self.config.preset, self.config.state.overrides, config))
        self.say(f"Added {name}")
        return True

    def _valid_config(self) -> RunConfig | None:
        """The Configure tab's config, or None (and the errors said) when it has none or errors."""
        if self.config is None:
            return None
        config = self.config.current_config()
        if config is None:
            issues = "; ".join(f"{i.path}: {i.message}" for i in self.config.errors()[:3])
            self.say(f"The configuration has errors; fix them in the Configure tab first ({issues})", error=True)
        return config

    def load_selected_into_configure(self) -> bool:
        """Put the selected job's preset and changes into the Configure tab's forms."""
        row = self.selected_row()
        if row is None or self.config is None:
            return False
        job = self.jobs[row]
        self.config.load_config(job.overrides(), preset=job.preset)
        self.say(f"{job.name} is in the Configure tab: change it there, then Replace with current config")
        return True

    def replace_selected(self) -> bool:
        """The selected job becomes the Configure tab's config; its name and "after" stay."""
        row = self.selected_row()
        config = self._valid_config() if row is not None else None
        if config is None or row is None or self.config is None:
            return False
        old = self.jobs[row]
        job = job_from_config(old.name, self.config.preset, self.config.state.overrides, config)
        job.after = list(old.after)
        self.jobs[row] = job
        self._refresh(select=row)
        self._edited()
        self.say(f"Replaced {job.name} with the current config")
        return True

    def add_baseline(self) -> bool:
        """A random-policy job on the current env, for the Configure tab's Baseline episodes."""
        env, episodes = "CartPole-v1", BudgetParams().episodes
        if self.config is not None:
            raw = self.config.value("env") or {}
            env = raw.get("id") or raw.get("entry_point") or env
            episodes = int(self.config.value("budget.episodes") or episodes)
        name = self.ask_job_name(default_job_name("base", env, self.names()))
        if not name:
            return False
        self.add_job(baseline_job(name, env, episodes))
        self.say(f"Added {name}: a random policy on {env} for {episodes} episodes")
        return True

    def names(self) -> list[str]:
        return [j.name for j in self.jobs]

    def ask_job_name(self, default: str) -> str | None:
        """Ask for a new job's name until it is valid and unused (tests replace this)."""
        name = default
        while True:
            name, ok = QInputDialog.getText(self, "Job name", "Name of the job (part of its run id):", text=name)
            if not ok:
                return None
            name = name.strip()
            problem = self.name_problem(name)
            if not problem:
                return name
            QMessageBox.warning(self, "Job name", problem)

    def name_problem(self, name: str) -> str | None:
        if not NAME_RE.match(name):
            return f"{name!r} is not a job name: letters, digits, '.', '_' and '-', at most 48, starting with a letter or digit"
        if name in self.names():
            return f"the plan has a job named {name} already"
        return None

    # --- files ---------------------------------------------------------------------------------

    def save(self, path: Path) -> bool:
        try:
            plan = Plan.model_validate(self.plan_raw())
            save_plan(plan, Path(path))
        except (ValidationError, OSError) as exc:
            self.say(f"Cannot save the plan: {exc}".splitlines()[0], error=True)
            return False
        self.path, self._saved = Path(path), self.plan_raw()
        self.say(f"Saved {path}")
        return True

    def load(self, path: Path) -> bool:
        """Read a plan file; jobs with bad values are kept (Start names them), a bad structure is not."""
        try:
            plan = Plan.model_validate(read_yaml(Path(path)))
        except (ValueError, ValidationError) as exc:
            self.say(f"Cannot load {path}: {exc}".replace("\n", " "), error=True)
            return False
        self.set_plan(plan)
        self.path, self._saved = Path(path), self.plan_raw()
        self.say(f"Loaded {path}")
        return True

    def ask_save_path(self) -> Path | None:
        start = str(self.path or Path.home() / "plan.yaml")
        path, _ = QFileDialog.getSaveFileName(self, "Save plan", start, "Plan files (*.yaml *.yml)")
        return Path(path) if path else None

    def ask_open_path(self) -> Path | None:
        path, _ = QFileDialog.getOpenFileName(self, "Load plan", str(self.path or Path.home()), "Plan files (*.yaml *.yml)")
        return Path(path) if path else None

    # --- view ----------------------------------------------------------------------------------

    def say(self, text: str, error: bool = False) -> None:

        self.message.setStyleSheet(f"color: {error_color(self).name()}" if error else "")
        self.message.setText(text)

    def _edited(self, *_args: object) -> None:
        self.changed.emit()

    def _refresh(self, select: int | None = None) -> None:
        keep = self.selected_row() if select is None else select
        self.table.clear()
        for job in self.jobs:
            QTreeWidgetItem(self.table, [job.name, job.algo or "preset", job.env or "preset", job_budget(job),
                                         job_seeds(job), job.preset or "-", job_changes(job), ", ".join(job.after)])
        fit_columns(self.table)
        if keep is not None and 0 <= keep < len(self.jobs):
            self.table.setCurrentItem(top_items(self.table)[keep])
        self._show_after()

    def _show_after(self) -> None:
        row = self.selected_row()
        for b in (self.remove_button, self.up_button, self.down_button):
            b.setEnabled(row is not None)
        for b in (self.edit_button, self.replace_button):
            b.setEnabled(row is not None and self.config is not None)
        self.seeds_edit.setEnabled(row is not None)
        self.seeds_edit.setText(seeds_field_text(self.jobs[row]) if row is not None else "")
        self.after_list.blockSignals(True)
        self.after_list.clear()
        if row is not None:
            job = self.jobs[row]
            self.after_label.setText(f"{job.name} runs after")
            for other in self.jobs:
                if other is job:
                    continue
                item = QListWidgetItem(other.name, self.after_list)
                item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
                item.setCheckState(Qt.CheckState.Checked if other.name in job.after else Qt.CheckState.Unchecked)
        else:
            self.after_label.setText("Runs after (select a job)")
        self.after_list.blockSignals(False)

    def set_seeds(self, name: str, text: str) -> bool:
        """Job ``name`` runs with the seeds ``text`` asks for (``5``, ``3,7,11``; ``1`` or empty: one run); a value
        that cannot be read is said, naming the field, and changes nothing."""
        row = self.names().index(name)
        job = self.jobs[row]
        try:
            new = PlanJob.model_validate({**job.model_dump(), "seeds": text.strip() or None})
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"]) or "seeds"
            self.say(f"{job.name}: {field}: {error['msg'].removeprefix('Value error, ')}", error=True)
            return False
        if new.seeds == job.seeds:
            return True
        job.seeds = new.seeds
        self._refresh(select=row)
        self._edited()
        seeds = job.seed_list()
        self.say(f"{job.name} runs {len(seeds)} seeds, a few at a time" if seeds else f"{job.name} runs once")
        return True

    def _seeds_edited(self) -> None:
        row = self.selected_row()
        if row is not None and self.seeds_edit.text() != seeds_field_text(self.jobs[row]):
            self.set_seeds(self.jobs[row].name, self.seeds_edit.text())

    def _after_edited(self, _item: QListWidgetItem) -> None:
        row = self.selected_row()
        if row is None:
            return
        ticked = [self.after_list.item(i).text() for i in range(self.after_list.count())
                  if self.after_list.item(i).checkState() == Qt.CheckState.Checked]
        job = self.jobs[row]
        job.after = [j.name for j in self.jobs if j.name in ticked]
        # only the table's cell: rebuilding the list would delete the item whose signal this is
        top_items(self.table)[row].setText(COLUMNS.index("After"), ", ".join(job.after))
        self._edited()


def seeds_field_text(job: PlanJob) -> str:
    """A job's seeds as the Seeds field shows them: ``5``, ``3,7,11``, or empty for a single run."""
    if job.seeds is None:
        return ""
    return str(job.seeds) if isinstance(job.seeds, int) else ",".join(str(s) for s in job.seeds)
