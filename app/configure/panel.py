"""The Configure panel: presets, env and algorithm, schema forms, fit bar, errors and Launch.

A view on the window's ``ConfigModel``: edits go to the model, and every widget shows what the
model's last validation says (field messages, the error list, the env's spaces, the fit estimate,
whether Launch is possible). Its parts live beside it: the column of forms (``sections.FormsColumn``) and the
Seeds and Launch row (``launch_row``: one launch a group of seeds).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QFrame,
    QLabel,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.configure.env_picker import EnvPicker
from app.configure.estimator import WAITING_FOR_GPUS, target_choices
from app.configure.fit_bar import FitBox, no_fit_reason
from app.configure.hints import HintsBox
from app.configure.launch_row import LaunchRequest, LaunchRow
from app.configure.model import ConfigModel
from app.configure.presets_box import PresetsBox
from app.configure.sections import FormsColumn
from app.configure.state import ConfigState
from app.configure.wheel_guard import WheelGuard, guard_wheel
from app.theme import error_color
from app.widgets.fit_list import FitList
from core.config.dotted import get_path
from core.config.errors import ConfigError, FieldIssue
from core.estimate.result import FitEstimate, Suggestion

if TYPE_CHECKING:
    from app.configure.tune_dialog import TuneDialog
    from core.config.schema import RunConfig  # pydantic: the first validation, after the window's first frame

PRESET_NAME_PX = 180      # the longest preset name the folded preset line shows whole (a user's may be any length)
SIDE_WIDTH = 310          # the budget, fit bar and Launch column beside the forms on a laptop screen
# a panel shorter than this folds its preset list (a window made short on a big screen): the forms keep
# their rows; a fold or unfold the user clicks is kept whatever the height
FOLD_PRESETS_BELOW = 800
QWIDGETSIZE_MAX = (1 << 24) - 1
PRESETS_TIP = "Show or hide the preset list"


class ConfigurePanel(FormsColumn, QWidget):
    """Everything needed to set up a run; emits ``launch_requested(LaunchRequest)``.

    ``model`` is the window's config (a panel of its own makes one when none is given).
    """

    launch_requested = Signal(object)
    compact_changed = Signal(bool)  # set_compact: a laptop screen or not (the window folds Configure by it)

    def __init__(self, model: ConfigModel | None = None, parent: QWidget | None = None, detect_gpus: bool = True,
                 later_forms: bool = False):
        """``detect_gpus=False``: the target combo waits for ``show_targets`` and its profiles (the window asks
        NVML for this machine's GPUs after its first frame, off the GUI thread). ``later_forms``: the forms below the
        fold (``LATER_FORMS``) wait in their places for ``build_later_forms()`` (the window's, after its first frame),
        or for one of their rows to be asked for."""
        super().__init__(parent)
        self.model = model or ConfigModel(self)
        self.config_changed = self.model.config_changed
        self.estimate_changed = self.model.estimate_changed

        self.presets_box = PresetsBox(self.model.state)
        self.presets_box.preset_selected.connect(self.select_preset)
        self.env_picker = EnvPicker()
        self.env_picker.env_edited.connect(lambda env: self._edited("env", env))
        self.env_picker.algo_edited.connect(lambda algo: self._edited("algo", algo))
        self._init_forms()
        forms_widget = self._build_forms(later_forms)
        self._build_verdict(detect_gpus)
        self._build_launch()
        self._build_left(forms_widget)
        self._build_side()
        self.body = QBoxLayout(QBoxLayout.Direction.TopToBottom)
        self.body.setSpacing(4)
        self.body.addWidget(self.left, 1)
        self.body.addWidget(self.side, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(self.body, 1)
        self.model.values_changed.connect(self.refresh_values)
        self.model.validated.connect(self._show_validation)
        self.wheel_guard = WheelGuard(self)
        guard_wheel(self, self.wheel_guard)
        self.refresh_values()
        self._show_validation()

    def _build_verdict(self, detect_gpus: bool) -> None:
        """The fit bar (target, verdict, suggestions), the error list, the hints and the notes."""
        self.fit_box = FitBox()
        if detect_gpus:
            self.fit_box.set_targets(target_choices(), "auto")
        else:  # the profiles (core.estimate.gpus) and this machine's GPUs come with show_targets
            self.fit_box.set_targets([("auto", WAITING_FOR_GPUS)], "auto", complete=False)
        self.fit_box.target_changed.connect(lambda target: self._edited("target_gpu", target))
        self.fit_box.suggestion_clicked.connect(self.apply_suggestion)
        self.errors_list = FitList()
        self.errors_list.itemActivated.connect(self._focus_issue)
        self.errors_list.itemClicked.connect(self._focus_issue)
        self.errors_list.hide()
        self.warnings_label = QLabel()
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setEnabled(False)
        self.warnings_label.hide()
        self.hints_box = HintsBox()
        self.hints_box.fix_clicked.connect(self.model.apply_hint)

    def _build_launch(self) -> None:
        """Tune... and the Seeds and Launch row."""
        self.launch_row = LaunchRow()  # Seeds and Launch
        self.launch_button, self.seeds_edit = self.launch_row.launch_button, self.launch_row.seeds_edit
        self.seeds_error = self.launch_row.seeds_error
        self.launch_button.clicked.connect(self.request_launch)
        self.seeds_edit.textChanged.connect(lambda _text: self._show_seeds())
        self.tune_button = QPushButton("Tune...")
        self.tune_button.setToolTip("Find the n_envs, vec env, device and batch that train fastest here and fit, "
                                    "in short real trainings (rlpanel tune)")
        self.tune_button.clicked.connect(self.open_tune)
        self.tune_dialog: TuneDialog | None = None

    def _build_left(self, forms_widget: QWidget) -> None:
        """The preset list and the forms, sharing a column: on a laptop screen the open list takes the forms' place,
        so the Run / Budget / Fit column beside it keeps its height."""
        self.forms_area = QScrollArea()
        self.forms_area.setWidgetResizable(True)
        self.forms_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.forms_area.setWidget(forms_widget)
        # a laptop screen: the preset list folds away to this one line (MainWindow.set_compact)
        self.presets_toggle = QToolButton()
        self.presets_toggle.setCheckable(True)
        self.presets_toggle.setAutoRaise(True)
        self.presets_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.presets_toggle.setToolTip(PRESETS_TIP)
        self.compact = False
        self.presets_toggle.toggled.connect(self._show_presets)
        self.presets_toggle.setChecked(True)
        self.presets_toggle.clicked.connect(self._presets_chosen)
        self.presets_chosen = False  # the user folded or unfolded the list: no fold by height after that
        # a pick in the list (a click or Enter) folds it again on a laptop screen, where it took the forms' place
        self.presets_box.list.itemClicked.connect(self._picked)
        self.presets_box.list.itemActivated.connect(self._picked)
        self.left = QWidget()
        left = QVBoxLayout(self.left)
        left.setContentsMargins(0, 0, 0, 0)
        left.setSpacing(4)
        left.addWidget(self.presets_toggle, 0)
        left.addWidget(self.presets_box, 0)
        left.addWidget(self.forms_area, 1)

    def _build_side(self) -> None:
        """What a launch is decided by (Run, Budget, the fit bar, errors, hints; Tune..., Seeds, Launch): below the
        forms, or beside them on a laptop screen (``set_compact``)."""
        decided = QWidget()
        box = QVBoxLayout(decided)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(4)
        box.addWidget(self.run_form, 0)
        box.addWidget(self.budget_form, 0)  # the budget stays in view: what a night's run is set by
        box.addWidget(self.fit_box, 0)
        box.addWidget(self.errors_list, 0)
        box.addWidget(self.hints_box, 0)
        box.addWidget(self.warnings_label, 0)
        box.addStretch(1)
        # a long verdict with errors and hints on a short screen scrolls rather than being cut; Launch stays below
        self.side_scroll = QScrollArea()
        self.side_scroll.setWidgetResizable(True)
        self.side_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.side_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.side_scroll.setWidget(decided)
        self.side = QWidget()
        side = QVBoxLayout(self.side)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(4)
        side.addWidget(self.side_scroll, 1)
        side.addWidget(self.tune_button, 0)
        side.addWidget(self.launch_row, 0)

    def show_targets(self, choices: list[tuple[str, str]]) -> None:
        """The target combo's choices (``estimator.target_choices``), the config's target selected."""
        self.fit_box.set_targets(choices, str(self.model.state.effective_raw().get("target_gpu") or "auto"))

    # --- a laptop screen -------------------------------------------------------------------------

    def set_compact(self, compact: bool) -> None:
        """A laptop screen (under ~900 logical pixels high): the preset list folds away, and the
        budget, fit bar and Launch move beside the forms so the forms keep their height."""
        self.compact = compact
        self.presets_toggle.setChecked(not compact)
        self.body.setDirection(QBoxLayout.Direction.LeftToRight if compact else QBoxLayout.Direction.TopToBottom)
        # as wide as its widest row with the scroll bar beside it: nothing in it is ever squeezed under another
        decided = self.side_scroll.widget()
        assert decided is not None
        width = max(SIDE_WIDTH, decided.minimumSizeHint().width() + self.side_scroll.verticalScrollBar().sizeHint().width())
        self.side.setFixedWidth(width if compact else QWIDGETSIZE_MAX)
        self.side.setMinimumWidth(width if compact else 0)
        self.presets_box.fill_column(compact)
        self._show_presets(self.presets_toggle.isChecked())
        # the layouts take the folded list out of their minimum width now, not at the next event loop turn: a window
        # sized before that would be made wider than a laptop screen by the list's width
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        self.compact_changed.emit(compact)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if not self.compact and not self.presets_chosen:
            self.presets_toggle.setChecked(event.size().height() >= FOLD_PRESETS_BELOW)

    def _presets_chosen(self) -> None:
        self.presets_chosen = True

    def _show_presets(self, shown: bool) -> None:
        self.presets_box.setVisible(shown)
        # beside the Run / Budget / Fit column the open list takes the forms' place rather than squeezing them
        self.forms_area.setVisible(not (shown and self.compact))
        self.presets_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self._presets_title()

    def _picked(self) -> None:
        """A preset clicked (or Enter) in the list: on a laptop screen the list folds and the forms are back."""
        if self.compact and self.presets_toggle.isChecked():
            self.presets_toggle.setChecked(False)

    def _presets_title(self) -> None:
        """Folded: "Preset: <name>", a long name shortened in its middle (the line sized Configure and the window:
        1434 px on a 1280 px screen) and then whole in the tooltip."""
        name = self.model.preset or "schema defaults"
        shown = self.presets_toggle.fontMetrics().elidedText(name, Qt.TextElideMode.ElideMiddle, PRESET_NAME_PX)
        self.presets_toggle.setText("Presets" if self.presets_toggle.isChecked() else f"Preset: {shown}")
        self.presets_toggle.setToolTip(PRESETS_TIP if shown == name else f"Preset: {name}\n{PRESETS_TIP}")

    # --- what the model holds (the window and tests ask the panel) ----------------------------

    @property
    def state(self) -> ConfigState:
        return self.model.state

    def current_config(self) -> RunConfig | None:
        return self.model.current_config()

    def errors(self) -> list[FieldIssue]:
        return self.model.errors()

    def current_preset(self) -> str | None:
        return self.model.preset

    def current_estimate(self) -> FitEstimate | None:
        return self.model.estimate

    # --- edits -------------------------------------------------------------------------------

    def select_preset(self, name: str | None) -> None:
        """Show preset ``name``: the user's edits are dropped, except the environment they chose."""
        self.presets_box.select(name)
        self.model.select_preset(name)

    def load_config(self, raw: dict[str, Any], preset: str | None = None) -> None:
        """Put a config (e.g. a finished run's) into the forms, as edits over ``preset``."""
        self.model.load_config(raw, preset)

    def set_field(self, path: str, value: Any) -> None:
        """Set one field as the user would, by its dotted path."""
        self.model.set_field(path, value)

    def apply_suggestion(self, suggestion: Suggestion) -> None:
        """Apply the estimate's suggested fix."""
        self.model.apply_suggestion(suggestion)

    def validate_now(self) -> None:
        self.model.validate_now()

    def seeds(self) -> list[int] | None:
        """The Seeds field's seeds (None: a single run); ``ConfigError`` naming the field when it cannot be read."""
        return self.launch_row.seeds()

    def request_launch(self) -> bool:
        """What Launch / Ctrl+Enter does; returns whether a launch was requested."""
        config = self.model.current_config()
        if config is None:
            return False
        try:
            seeds = self.seeds()
        except ConfigError:  # the field says why, under Launch
            return False
        estimate = self.model.estimate
        if estimate is not None and not estimate.fits and not self.confirm_no_fit(estimate):
            return False
        if estimate is not None and estimate.device_warnings and not self.confirm_warnings(estimate):
            return False
        from core.launch.start import group_memory_problem  # its modules (filelock...) load at the first launch

        crowded = group_memory_problem(estimate, len(seeds)) if estimate is not None and seeds else None
        if crowded and not self.confirm_group(crowded):
            return False
        self.launch_requested.emit(LaunchRequest(config, self.model.preset, self.model.warnings(), copy.deepcopy(estimate),
                                                 seeds))
        return True

    def confirm_group(self, why: str) -> bool:
        """Ask before launching a group whose runs would not fit side by side (tests replace this)."""
        answer = QMessageBox.warning(self, "The group does not fit at once", why + "\n\nLaunch all of them anyway?",
                                     QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                     QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def open_tune(self) -> TuneDialog | None:
        """Tune...: a dialog tuning the config in the forms; "Use this" sets its pick here."""
        config = self.model.tunable_config()
        if config is None or config.is_baseline:
            why = ("Fix the errors listed first." if config is None else
                   f"{config.algo} is a baseline: it does not train, so there is nothing to tune.")
            QMessageBox.information(self, "Tune", why)
            return None
        from app.configure.tune_dialog import TuneDialog  # a dialog on demand: its modules load when first opened

        dialog = TuneDialog(config, self)
        dialog.pick_chosen.connect(self.use_tuned)
        dialog.preset_saved.connect(self._tuned_preset_saved)
        dialog.preset_chosen.connect(self.use_tuned_preset)
        self.tune_dialog = dialog
        dialog.show()
        return dialog

    def use_tuned(self, settings: dict[str, Any]) -> None:
        """Put a tune's pick into the forms, as edits (where it was not saved as a preset)."""
        for path, value in settings.items():
            self.model.set_field(path, value)

    def _tuned_preset_saved(self, _name: str) -> None:
        self.presets_box.reload()  # the new file in the list now, the selection kept

    def use_tuned_preset(self, name: str) -> None:
        """Select the preset a tune saved its pick as (the user's config with the pick)."""
        if name not in self.presets_box.presets:
            self.presets_box.reload()
        self.select_preset(name)

    def confirm_no_fit(self, estimate: FitEstimate) -> bool:
        """Ask before launching a run the estimate says will not fit (tests replace this)."""
        why = no_fit_reason(estimate)
        answer = QMessageBox.warning(self, "The run does not fit", why + "\n\nLaunch anyway?",
                                     QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                     QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def confirm_warnings(self, estimate: FitEstimate) -> bool:
        """Ask before launching on another device than the user expects (tests replace this).

        Yes (launch) is the default button, so Enter launches: the user pressed Launch, and this question only makes
        sure they read where the run trains. A run that does not fit was asked about before, with No as the default."""
        text = "\n\n".join(estimate.device_warnings)
        answer = QMessageBox.warning(self, f"The run trains on {estimate.train_device or 'another device'}",
                                     text + f"\n\nLaunch on {estimate.train_device or 'it'} anyway?",
                                     QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                     QMessageBox.StandardButton.Yes)
        return answer == QMessageBox.StandardButton.Yes

    # --- showing the model ---------------------------------------------------------------------

    def refresh_values(self) -> None:
        """Show the effective values everywhere (after a preset change, reset or load)."""
        raw = self.model.state.effective_raw()
        for path, row in self.rows.items():
            row.set_value(get_path(raw, path))
            row.set_changed(self.model.state.is_changed(path))
        self.presets_box.select(self.model.preset)
        self.env_picker.show_env(raw.get("env") or {})
        self.env_picker.show_algo(str(raw.get("algo")))
        self._show_algo_form(str(raw.get("algo")))
        self.fit_box.select_target(str(raw.get("target_gpu") or "auto"))
        self._presets_title()

    def _show_validation(self) -> None:
        model = self.model
        if not self.presets_box.checked and model.state.presets_checked:  # the first validation checked the presets:
            self.presets_box.reload()  # the broken ones say so now
        self.env_picker.show_spaces(model.spaces_text, model.info_keys_seen)
        self._show_issues(model.issues)
        self.steps_hint.show_plan(model.validation.config)
        self._show_threads()
        if model.estimate is not None:
            self.fit_box.show_estimate(model.estimate, model.host_total)
        else:
            self.fit_box.show_unavailable(model.estimate_note)
        self._show_seeds()

    def _show_seeds(self) -> None:
        self.launch_row.show_seeds(not self.model.issues)

    def _show_issues(self, issues: list[FieldIssue]) -> None:
        by_path: dict[str, str] = {}
        for issue in issues:
            by_path.setdefault(issue.path, issue.message)
        for path, row in self.rows.items():
            row.set_error(by_path.get(path))
        env_error = "; ".join(m for p, m in by_path.items() if p == "env" or p.startswith("env."))
        self.env_picker.show_errors(env_error or None, by_path.get("algo"))
        self.errors_list.clear()
        color = error_color(self)
        for issue in issues:
            field = self.rows.get(issue.path)
            where = f"{field.label.text()} ({issue.path})" if field else (issue.path or "config")
            item = QListWidgetItem(f"{where}: {issue.message}")
            item.setData(Qt.ItemDataRole.UserRole, issue.path)
            item.setForeground(color)
            self.errors_list.addItem(item)
        self.errors_list.setVisible(bool(issues))
        self.errors_list.fit_height()  # as tall as its lines, up to a limit: the forms keep the space
        hints = self.model.hints()
        self.hints_box.show_hints(hints, {path: row.label.text() for path, row in self.rows.items()})
        hinted = {str(h) for h in hints}
        warnings = [w for w in self.model.warnings() if w not in hinted]
        if self.model.pick_note:  # a preset picked for an env its algorithm cannot train: what was kept, and why
            warnings.insert(0, self.model.pick_note)
        self.warnings_label.setText("\n".join(f"Note: {w}" for w in warnings))
        self.warnings_label.setVisible(bool(warnings))

    def _focus_issue(self, item: QListWidgetItem) -> None:
        row = self.rows.get(item.data(Qt.ItemDataRole.UserRole))
        if row is not None and row.isVisible():
            row.editor.setFocus()


