"""The Configure panel: presets, env and algorithm, schema forms, fit bar, errors and Launch.

A view on the window's ``ConfigModel``: edits go to the model, and every widget shows what the
model's last validation says (field messages, the error list, the env's spaces, the fit estimate,
whether Launch is possible). The Seeds field beside Launch makes one launch a group of seeds: N runs of
the config at once (``core.run.start.start_group``, as ``rlpanel train --seeds``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.configure.engine_hint import EngineHint
from app.configure.env_picker import EnvPicker
from app.configure.estimator import WAITING_FOR_GPUS, target_choices
from app.configure.fit_bar import FitBox, no_fit_reason
from app.configure.forms import FieldRow, SectionForm
from app.configure.hints import HintsBox
from app.configure.model import ConfigModel
from app.configure.own_network import BROWSED, add_browse_button
from app.configure.presets_box import PresetsBox
from app.configure.state import ConfigState
from app.configure.steps_hint import PlannedStepsHint
from app.configure.threads_hint import TorchThreadsHint, threads_here
from app.configure.wheel_guard import WheelGuard, guard_wheel
from app.theme import error_color
from app.widgets.fit_list import FitList
from app.widgets.wrap_label import WrapLabel
from core.config.dotted import get_path
from core.config.errors import ConfigError, FieldIssue
from core.config.field_index import FieldSpec, field_index
from core.config.seeds import parse_seeds, seeds_text
from core.fit.result import FitEstimate, Suggestion

if TYPE_CHECKING:
    from app.configure.tune_dialog import TuneDialog
    from core.config.schema import RunConfig  # pydantic: the first validation, after the window's first frame

# Top-level fields with their own widgets (env picker, algorithm combo, fit bar's target combo).
SPECIAL_FIELDS = ("schema_version", "env", "algo", "target_gpu")
# budget fields that scroll with the forms; timesteps, checkpoint and evaluation stay in view
BUDGET_MORE = ("keep_checkpoints", "checkpoint_minutes", "eval_episodes", "stop_at_reward",
               "stop_after_evals_without_improvement", "stop_min_evals", "episodes")
PRESET_NAME_PX = 180      # the longest preset name the folded preset line shows whole (a user's may be any length)
SIDE_WIDTH = 310          # the budget, fit bar and Launch column beside the forms on a laptop screen
# a panel shorter than this folds its preset list (a window made short on a big screen): the forms keep
# their rows; a fold or unfold the user clicks is kept whatever the height
FOLD_PRESETS_BELOW = 800
QWIDGETSIZE_MAX = (1 << 24) - 1
ALGO_SECTIONS = tuple(a.section for a in field_index().algorithms)
# forms below the fold of the forms' column (after the algorithm's): built after the window's first frame
LATER_FORMS = ("policy", "runtime", "budget_more")
PRESETS_TIP = "Show or hide the preset list"


V = TypeVar("V")  # a built form, or a row of one


class _BuiltOnAsk(dict[str, V]):
    """The panel's forms or rows by name: one of a form not built yet (an algorithm's, one built later) is built
    when asked for by ``[]`` (``get``, ``in`` and iterating see the built ones only)."""

    def __init__(self, build: Callable[[str], V]):
        super().__init__()
        self._build = build

    def __missing__(self, key: str) -> V:
        return self._build(key)


def _line_up_units(form: SectionForm) -> None:
    """A form's unit slots as wide as its own longest unit: its editors line up."""
    width = max((row.unit_label.sizeHint().width() for row in form.rows.values()), default=0)
    for row in form.rows.values():
        # a schedule (kind, start -> end) has no unit: it takes the unit slot's room too
        row.unit_label.setFixedWidth(0 if row.kind.editor == "schedule" else width)


@dataclass
class LaunchRequest:
    """What Launch hands the main window: the validated config and what was known about it."""

    config: RunConfig
    preset: str | None
    warnings: list[str] = field(default_factory=list)
    estimate: FitEstimate | None = None
    seeds: list[int] | None = None  # a group of seeds (the Seeds field); None: one run, the config's own seed


class ConfigurePanel(QWidget):
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
        # an algorithm's form is built when it is first shown (or asked for): the first frame builds one of them
        self._algo_slots: dict[str, tuple[FieldSpec, str, QWidget, tuple[str, ...]]] = {}  # the later forms' too
        self._slot_paths: dict[str, str] = {}  # a later form's row paths: the form's name
        self.threads_hint: TorchThreadsHint | None = None  # under Torch threads, once the runtime form is built
        self.engine_hint: EngineHint | None = None  # under Engine, likewise
        self.forms: dict[str, SectionForm] = _BuiltOnAsk(self._algo_form)
        self.rows: dict[str, FieldRow] = _BuiltOnAsk(
            lambda path: self._algo_form(self._slot_paths.get(path) or path.partition(".")[0]).rows[path])
        forms_widget = self._build_forms(later_forms)
        self.fit_box = FitBox()
        if detect_gpus:
            self.fit_box.set_targets(target_choices(), "auto")
        else:  # the profiles (core.fit.gpus) and this machine's GPUs come with show_targets
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
        self.launch_button = QPushButton("Launch")
        self.launch_button.setToolTip("Start the run (Ctrl+Enter)")
        self.launch_button.setDefault(True)
        self.launch_button.clicked.connect(self.request_launch)
        self.seeds_edit = QLineEdit("1")
        self.seeds_edit.setToolTip(
            "Runs of this config, each with its own seed, launched together as a group:\n"
            "1 is a single run (its Seed setting); 5 is seeds 0-4; 3,7,11 those seeds.\n"
            "N runs start at once; to run them a few at a time, add the config to the Queue as a job with seeds.")
        self.seeds_edit.setPlaceholderText("1")
        self.seeds_edit.setMaximumWidth(self.seeds_edit.fontMetrics().horizontalAdvance("3,7,11,13,17") + 16)
        self.seeds_edit.textChanged.connect(lambda _text: self._show_seeds())
        self.seeds_label = QLabel("Seeds")
        self.seeds_label.setBuddy(self.seeds_edit)
        self.seeds_label.setToolTip(self.seeds_edit.toolTip())
        self.seeds_error = WrapLabel()
        self.seeds_error.setStyleSheet(f"color: {error_color(self).name()}")
        self.seeds_error.hide()
        self.tune_button = QPushButton("Tune...")
        self.tune_button.setToolTip("Find the n_envs, vec env, device and batch that train fastest here and fit, "
                                    "in short real trainings (rlpanel tune)")
        self.tune_button.clicked.connect(self.open_tune)
        self.tune_dialog: TuneDialog | None = None

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
        # the preset list and the forms share a column: on a laptop screen the open list takes the forms' place,
        # so the Run / Budget / Fit column beside it keeps its height
        self.left = QWidget()
        left = QVBoxLayout(self.left)
        left.setContentsMargins(0, 0, 0, 0)
        left.setSpacing(4)
        left.addWidget(self.presets_toggle, 0)
        left.addWidget(self.presets_box, 0)
        left.addWidget(self.forms_area, 1)
        # what a launch is decided by: below the forms, or beside them on a laptop screen (set_compact)
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
        launch_row = QHBoxLayout()
        launch_row.setSpacing(6)
        launch_row.addWidget(self.seeds_label, 0)
        launch_row.addWidget(self.seeds_edit, 0)
        launch_row.addWidget(self.launch_button, 1)
        side.addLayout(launch_row, 0)
        side.addWidget(self.seeds_error, 0)
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

    def _build_forms(self, later_forms: bool) -> QWidget:
        """One form per schema section; top-level scalars (such as ``name``) in a Run form."""
        container = QWidget()
        box = QVBoxLayout(container)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.env_picker)
        index = field_index()  # the schema's fields as plain data: no pydantic before the first frame
        sections = {s.name: s for s in index.fields if s.name not in SPECIAL_FIELDS and s.fields is not None}
        titles = {n: s.title for n, s in sections.items()}
        scalars = tuple(s.name for s in index.fields if s.name in SPECIAL_FIELDS or s.name in sections)
        self.run_form = SectionForm(index.fields, "", "Run", exclude=scalars)  # with the budget, beside or below
        self._add_form(None, self.run_form, "run")
        for name, section in sections.items():
            assert section.fields is not None
            if name == "budget":  # pinned below the scroll area; the rest of the budget scrolls
                self.budget_form = SectionForm(section.fields, name, titles[name], exclude=BUDGET_MORE)
                self._add_form(None, self.budget_form, name)
                # the steps the run trains, under Timesteps (SB3 trains whole rollouts), with its round-to buttons
                self.steps_hint = PlannedStepsHint.under(self.budget_form, self.rows["budget.total_timesteps"])
                self.steps_hint.round_clicked.connect(self.round_budget)
                pinned = tuple(s.name for s in section.fields if s.name not in BUDGET_MORE)
                if later_forms:
                    self._add_slot(box, "budget_more", section, f"{titles[name]}: more", pinned)
                else:
                    self._add_form(box, SectionForm(section.fields, name, f"{titles[name]}: more", exclude=pinned),
                                   "budget_more")
                continue
            title = f"{titles[name]} hyperparameters" if name in ALGO_SECTIONS else titles[name]
            if name in ALGO_SECTIONS:  # a slot in its place, the form in it when first shown
                self._add_slot(box, name, section, title).hide()
                continue
            if later_forms and name in LATER_FORMS:
                self._add_slot(box, name, section, title)
                continue
            self._add_form(box, SectionForm(section.fields, name, title), name)
            if name == "runtime":
                self._add_threads_hint()
            if name == "policy":
                self._add_browse_buttons()
        box.addStretch(1)
        for form in self.forms.values():
            _line_up_units(form)
        return container

    def _add_slot(self, box: QVBoxLayout, name: str, section: FieldSpec, title: str, exclude: tuple[str, ...] = ()) -> QWidget:
        """A place in the forms' column for a form built later (``_algo_form``)."""
        slot = QWidget()
        QVBoxLayout(slot).setContentsMargins(0, 0, 0, 0)
        box.addWidget(slot)
        self._algo_slots[name] = (section, title, slot, exclude)
        if name not in ALGO_SECTIONS:
            self._slot_paths.update(dict.fromkeys(section.leaf_paths(exclude), name))
        return slot

    def _add_browse_buttons(self) -> None:
        """The own network's rows: pick its file and class (read, never run)."""
        self.browse_buttons = [add_browse_button(self.rows[path]) for path in BROWSED]
        for button in self.browse_buttons:
            button.picked.connect(self._own_network_picked)
            button.problem.connect(lambda path, why: self.rows[path].set_error(why))

    def _add_threads_hint(self) -> None:
        """What "auto" comes to here, under Torch threads; under Engine, what to install where sbx is not."""
        self.threads_hint = TorchThreadsHint.under(self.forms["runtime"], self.rows["runtime.torch_threads"])
        self.engine_hint = EngineHint.under(self.forms["runtime"], self.rows["runtime.engine"])

    def build_later_forms(self) -> None:
        """The forms below the fold, in their places (``later_forms``); the column's width follows them."""
        for name in LATER_FORMS:
            if name in self._algo_slots:
                self._algo_form(name)
        self.forms_area.setMinimumWidth(self.forms_min_width())

    def _algo_form(self, name: str) -> SectionForm:
        """An algorithm's form (or one built later), built in its slot (with the model's values, issues and the wheel
        guard) if not yet."""
        if name in self.forms:
            return self.forms[name]
        if name not in self._algo_slots:
            raise KeyError(name)
        section, title, slot, exclude = self._algo_slots[name]
        prefix = "budget" if name == "budget_more" else name
        assert section.fields is not None
        form = SectionForm(section.fields, prefix, title, exclude=exclude)
        _line_up_units(form)
        self._add_form(None, form, name)
        layout = slot.layout()
        assert layout is not None
        layout.addWidget(form)
        if hasattr(self, "wheel_guard"):  # else the panel's own guard_wheel, at its end, takes it in
            guard_wheel(form, self.wheel_guard)
            raw = self.model.state.effective_raw()
            for path, row in form.rows.items():
                row.set_value(get_path(raw, path))
                row.set_changed(self.model.state.is_changed(path))
            self._show_issues(self.model.issues)
        if name == "runtime":
            self._add_threads_hint()
            if hasattr(self, "wheel_guard"):
                self._show_threads()
        if name == "policy":
            self._add_browse_buttons()
        return form

    def show_targets(self, choices: list[tuple[str, str]]) -> None:
        """The target combo's choices (``estimator.target_choices``), the config's target selected."""
        self.fit_box.set_targets(choices, str(self.model.state.effective_raw().get("target_gpu") or "auto"))

    def round_budget(self, steps: int) -> None:
        """A round-to button: the budget becomes a whole number of rollouts (or train_freq cycles)."""
        self.model.set_field("budget.total_timesteps", steps)
        self.model.validate_now()

    def _add_form(self, box: QVBoxLayout | None, form: SectionForm, name: str) -> None:
        form.edited.connect(self._edited)
        form.reset_requested.connect(self.model.reset)
        self.forms[name] = form
        self.rows.update(form.rows)
        if box is not None:
            box.addWidget(form)

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

    def forms_min_width(self) -> int:
        """The forms' column as narrow as its widest row allows, with its scroll bar: never a sideways scroll."""
        forms = self.forms_area.widget()
        assert forms is not None
        content = forms.minimumSizeHint().width()
        bar = self.forms_area.verticalScrollBar().sizeHint().width()
        return content + bar + 2 * self.forms_area.frameWidth()

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
        return parse_seeds(self.seeds_edit.text(), "Seeds")

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
        from core.run.start import group_memory_problem  # its modules (filelock...) load at the first launch

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

    def _own_network_picked(self, path: str, ref: str, folder: str) -> None:
        """A class picked with Browse...: set the field; a file outside the launch folder records its folder as the
        run's import folder (``env.path``) when none is set, else the field says why it cannot be imported."""
        current = self.model.state.effective_raw().get("env") or {}
        if folder and current.get("path") not in (None, "", folder):
            self.rows[path].set_error(f"{ref} is in {folder}, but this config imports from {current['path']} (env.path): "
                                      "put the file there, or start rlpanel from its folder")
            return
        if folder:
            self.set_field("env.path", folder)
        self.set_field(path, ref)
        self.refresh_values()

    def _edited(self, path: str, value: Any) -> None:
        self.model.edit(path, value)
        row = self.rows.get(path)
        if row is not None:
            row.set_changed(self.model.state.is_changed(path))
        if path == "algo":
            self._show_algo_form(str(value))

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

    def _show_algo_form(self, algo: str) -> None:
        for name in ALGO_SECTIONS:
            shown = name == algo.lower()
            if shown and name in self._algo_slots:
                self._algo_form(name)
            if name in self._algo_slots:
                self._algo_slots[name][2].setVisible(shown)
        self.forms_area.setMinimumWidth(self.forms_min_width())  # the form shown sets how narrow the column may get

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

    def _show_threads(self) -> None:
        if self.threads_hint is not None:
            self.threads_hint.show_threads(threads_here(self.model.validation.config, self.model.estimate))
        if self.engine_hint is not None:
            self.engine_hint.show_installed()

    def _show_seeds(self) -> None:
        """Launch says how many runs it starts; a Seeds field it cannot read says why under it and disables Launch."""
        try:
            seeds = self.seeds()
            problem = None
        except ConfigError as exc:
            seeds, problem = None, str(exc)
        if self.seeds_error.text() != (problem or ""):  # every validation comes here: change only what changed
            self.seeds_error.setText(problem or "")
            self.seeds_error.setVisible(problem is not None)
            self.seeds_edit.setStyleSheet(f"color: {error_color(self).name()}" if problem else "")
        text = f"Launch {len(seeds)} runs" if seeds else "Launch"
        tip = (f"Start {len(seeds)} runs of this config at once, {seeds_text(seeds)} (Ctrl+Enter)" if seeds
               else "Start the run (Ctrl+Enter)")
        if self.launch_button.text() != text:
            self.launch_button.setText(text)
        self.launch_button.setToolTip(tip)
        self.launch_button.setEnabled(not self.model.issues and problem is None)

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


