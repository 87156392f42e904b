"""The environment picker (gymnasium id or ``module:Class`` entry point, with kwargs, wrappers, a frame
stack and a step time limit) and the algorithm selector."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QToolButton,
    QWidget,
)

from app.configure.fields import parse_text
from app.configure.forms import value_tip
from app.configure.model import KIND_TEXT
from app.theme import error_color
from core.config.algorithms.baselines import BASELINES
from core.config.algorithms.contrib import CONTRIB_FIX, installed_algorithms, missing_algorithms
from core.config.common_envs import COMMON_ENVS
from core.config.field_index import FieldKind, field_index, format_value


def _box_text(value: Any) -> str:
    """Env kwargs or wrappers as their box shows them: text typed (not YAML) as it was, else one line of YAML flow
    ("" for none)."""
    if isinstance(value, str):
        return value
    return format_value(value) if value else ""


def _load_or_text(text: str) -> Any:
    """Env kwargs typed into their box (under the value limits); text that is not YAML is passed on for the schema."""
    import yaml

    from core.util.yaml_reader import load_yaml

    try:
        return load_yaml(text, "env kwargs")
    except (yaml.YAMLError, ValueError):
        return text


def _yaml_or_text(text: str) -> Any:
    """YAML typed into a box; text that is not YAML is passed on for the schema to reject."""
    if not text.strip():
        return None
    import yaml  # the YAML parser loads when first needed: no preset's env sets these in the first frame

    from core.util.yaml_reader import load_yaml

    try:
        return load_yaml(text, "the env box")  # the project's one safe reader: its size limits and number rules
    except (yaml.YAMLError, ValueError):  # ValueError: over a limit; the schema names the field
        return text


CONTRIB_LINE = "more algorithms: rlpanel[contrib]"  # the algorithm box's line where sb3-contrib is not installed
ENTRY_HELP = "A custom env class; only the training worker imports it (its spaces are read in a subprocess)"


class EnvPicker(QGroupBox):
    """Emits ``env_edited(dict)`` (the raw ``env`` section) and ``algo_edited(str)`` on user edits."""

    env_edited = Signal(object)
    algo_edited = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Environment and algorithm", parent)
        kinds = self._build_env_fields()
        self._build_algo_fields()
        self._build_form(kinds)
        self._show_kind()
        self._show_options(False)
        self._connect_edits()
        self._loading = False

    def _build_env_fields(self) -> QHBoxLayout:
        """Gymnasium id or custom class, the env's options and the lines under them; returns the kinds' row."""
        self.gym_radio = QRadioButton("Gymnasium id")
        self.entry_radio = QRadioButton("Custom class")
        self.gym_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.gym_radio)
        group.addButton(self.entry_radio)
        kinds = QHBoxLayout()
        kinds.addWidget(self.gym_radio)
        kinds.addWidget(self.entry_radio)
        kinds.addStretch(1)

        self.id_combo = QComboBox()
        self.id_combo.setEditable(True)
        self.id_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        # as wide as the column gives, not as the longest id: a laptop screen's window keeps its forms readable
        self.id_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.id_combo.setMinimumContentsLength(12)
        for index, env in enumerate(COMMON_ENVS):
            self.id_combo.addItem(env.id)
            tip = f"{env.description}; {KIND_TEXT.get(env.action_kind, env.action_kind)}"
            if not env.available:
                tip += f" (needs pip install {env.extra})"
            self.id_combo.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
        self.id_combo.setToolTip("A registered gymnasium id; type any other id")
        self.entry_edit = QLineEdit()
        self.entry_edit.setPlaceholderText("package.module:Class")
        self.entry_edit.setToolTip(ENTRY_HELP)
        self.entry_edit.textChanged.connect(  # a module:Class longer than the field: whole in its tip
            lambda text: self.entry_edit.setToolTip(value_tip(text, ENTRY_HELP)))
        self.kwargs_edit = QPlainTextEdit()
        self.kwargs_edit.setPlaceholderText("e.g. {max_episode_steps: 500}")
        self.kwargs_edit.setToolTip("Keyword arguments passed to the env constructor (YAML or JSON mapping)")
        self.kwargs_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 10)
        self.wrappers_edit = QPlainTextEdit()
        self.wrappers_edit.setPlaceholderText("e.g. [ClipAction, {TimeLimit: {max_episode_steps: 500}}]")
        self.wrappers_edit.setToolTip("Gymnasium wrappers around each env, innermost first: dotted class names "
                                      "(gymnasium.wrappers.TimeLimit, stable_baselines3.common.atari_wrappers.AtariWrapper "
                                      "or your own module) with kwargs; only the training worker imports them")
        self.wrappers_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 10)
        self.frame_stack_edit = QLineEdit()
        self.frame_stack_edit.setPlaceholderText("none")
        self.frame_stack_edit.setToolTip("Stack this many last observations (VecFrameStack); empty: none")
        limit = field_index().section("env.step_timeout_s")  # its words are the schema's, as in the generated forms
        self.step_limit_title = f"{limit.title} (s)"
        self.step_limit_edit = QLineEdit()
        self.step_limit_edit.setPlaceholderText("none")
        self.step_limit_edit.setToolTip(f"env.step_timeout_s: {limit.description}")
        self.spaces_label = QLabel()
        self.spaces_label.setEnabled(False)
        self.spaces_label.setWordWrap(True)
        self.env_error = QLabel()
        self.env_error.setWordWrap(True)
        self.env_error.hide()
        return kinds

    def _build_algo_fields(self) -> None:
        self.algo_combo = QComboBox()
        # as wide as "RecurrentPPO", not as its longest line: the plain install's note on sb3-contrib sized the box,
        # the forms' column and the window (1673 px on a 1280 px screen); the popup still shows every line whole
        self.algo_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.algo_combo.setMinimumContentsLength(len("RecurrentPPO"))
        self._fill_algorithms()
        self.measures_edit = QLineEdit()
        self.measures_edit.setPlaceholderText("info keys, e.g. co2_kg")
        self.measures_edit.setToolTip("env.info_keys: numbers the env puts in info when an episode ends, to record with "
                                      "each episode, plot and compare against the baseline (comma-separated)")
        self.algo_error = QLabel()
        self.algo_error.setWordWrap(True)
        self.algo_error.hide()

    def _build_form(self, kinds: QHBoxLayout) -> None:
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(kinds)
        self.id_label = QLabel("Env id")
        self.entry_label = QLabel("Entry point")
        form.addRow(self.id_label, self.id_combo)
        form.addRow(self.entry_label, self.entry_edit)
        # kwargs, wrappers and frame stack fold under one line (a row each, side by side made the column too wide
        # for a laptop screen): the hyperparameters keep their rows; they unfold when a config sets one
        self.options_toggle = QToolButton()
        self.options_toggle.setCheckable(True)
        self.options_toggle.setAutoRaise(True)
        self.options_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.options_toggle.setToolTip("Env kwargs, wrappers, frame stack and step time limit")
        self.options_toggle.toggled.connect(self._show_options)
        form.addRow(self.options_toggle)
        form.addRow("Env kwargs", self.kwargs_edit)
        form.addRow("Wrappers", self.wrappers_edit)
        form.addRow("Frame stack", self.frame_stack_edit)
        form.addRow(self.step_limit_title, self.step_limit_edit)
        form.addRow("", self.spaces_label)
        form.addRow("", self.env_error)
        form.addRow("Algorithm", self.algo_combo)
        form.addRow("", self.algo_error)
        form.addRow("Measures", self.measures_edit)
        self._form = form

    def _connect_edits(self) -> None:
        """Every edit the user makes is emitted (``_emit_env``, ``algo_edited``); ``show_env`` emits nothing."""
        self.gym_radio.toggled.connect(self._kind_toggled)
        line = self.id_combo.lineEdit()
        assert line is not None  # the combo is editable
        line.textEdited.connect(lambda _t: self._emit_env())
        self.id_combo.activated.connect(lambda _i: self._emit_env())
        self.entry_edit.textEdited.connect(lambda _t: self._emit_env())
        self.kwargs_edit.textChanged.connect(self._kwargs_changed)
        self.wrappers_edit.textChanged.connect(self._kwargs_changed)
        self.frame_stack_edit.textEdited.connect(lambda _t: self._emit_env())
        self.step_limit_edit.textEdited.connect(lambda _t: self._emit_env())
        self.measures_edit.textEdited.connect(lambda _t: self._emit_env())
        self.algo_combo.activated.connect(lambda _i: self.algo_edited.emit(self.algo_combo.currentText()))

    def _fill_algorithms(self) -> None:
        """The algorithms installed here, then the baselines; without sb3-contrib, a line saying how to get its algorithms."""
        algos = installed_algorithms()
        self.algo_combo.addItems(algos)
        missing = missing_algorithms()
        tip = ("SAC, TD3, DDPG, TQC and CrossQ need continuous (Box) actions; DQN and MaskablePPO discrete ones; "
               "PPO, A2C, TRPO and RecurrentPPO take both; ARS takes Box or Discrete")
        if missing:
            self.contrib_note = f"{', '.join(missing)} come with sb3-contrib, which is not installed: {CONTRIB_FIX}"
            self.algo_combo.insertSeparator(len(algos))
            self.algo_combo.addItem(CONTRIB_LINE)  # short: the whole note is the line's tooltip
            index = self.algo_combo.count() - 1
            self.algo_combo.setItemData(index, self.contrib_note, Qt.ItemDataRole.ToolTipRole)
            self.algo_combo.model().item(index).setEnabled(False)  # type: ignore[attr-defined]  # a note, not a choice
            tip += f". {self.contrib_note}"
        else:
            self.contrib_note = ""
        self.algo_combo.insertSeparator(self.algo_combo.count())
        self.algo_combo.addItems(list(BASELINES))  # a baseline job loaded from the queue shows as what it is
        self.algo_combo.setToolTip(tip)

    # --- user edits ------------------------------------------------------------------------

    def _kind_toggled(self, _checked: bool) -> None:
        self._show_kind()
        if not self._loading:
            self._emit_env()

    def _show_kind(self) -> None:
        gym = self.gym_radio.isChecked()
        self._form.setRowVisible(self.id_combo, gym)
        self._form.setRowVisible(self.entry_edit, not gym)

    def _kwargs_changed(self) -> None:
        if not self._loading:
            self._emit_env()

    def _show_options(self, shown: bool) -> None:
        for editor in (self.kwargs_edit, self.wrappers_edit, self.frame_stack_edit, self.step_limit_edit):
            self._form.setRowVisible(editor, shown)
        self.options_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self._options_title()

    def _options_title(self) -> None:
        """Folded, the line says what is set: "Env options: kwargs, wrappers, frame stack 4" (or "none")."""
        if self.options_toggle.isChecked():
            self.options_toggle.setText("Env options")
            return
        stack, limit = self.frame_stack_edit.text().strip(), self.step_limit_edit.text().strip()
        parts = [name for name, edit in (("kwargs", self.kwargs_edit), ("wrappers", self.wrappers_edit))
                 if edit.toPlainText().strip()] + ([f"frame stack {stack}"] if stack else []) + (
                     [f"step limit {limit} s"] if limit else [])
        self.options_toggle.setText(f"Env options: {', '.join(parts) or 'none'}")

    def env_raw(self) -> dict[str, Any]:
        """The env section as the user set it; unparsable kwargs are passed on for the schema to reject."""
        text = self.kwargs_edit.toPlainText().strip()
        kwargs: Any = _load_or_text(text) if text else {}
        if kwargs is None:
            kwargs = {}
        extra = {"wrappers": _yaml_or_text(self.wrappers_edit.toPlainText()) or [],
                 "frame_stack": parse_text(self.frame_stack_edit.text(), FieldKind("number", optional=True, integer=True)),
                 "step_timeout_s": parse_text(self.step_limit_edit.text(), FieldKind("number", optional=True)),
                 "info_keys": [k for k in self.measures_edit.text().replace(",", " ").split() if k]}
        if self.gym_radio.isChecked():
            return {"id": self.id_combo.currentText().strip(), "entry_point": None, "kwargs": kwargs, **extra}
        return {"id": None, "entry_point": self.entry_edit.text().strip() or None, "kwargs": kwargs, **extra}

    def _emit_env(self) -> None:
        self.env_edited.emit(self.env_raw())

    # --- shown from the config -------------------------------------------------------------

    def show_env(self, env: dict[str, Any]) -> None:
        """Show an env section without emitting ``env_edited``; text being typed is kept."""
        if env == self.env_raw():
            return
        self._loading = True
        try:
            entry = env.get("entry_point")
            (self.entry_radio if entry else self.gym_radio).setChecked(True)
            self._show_kind()
            if entry:
                self.entry_edit.setText(str(entry))
                self.entry_edit.setCursorPosition(0)  # its start (the module) when it is longer than the field
            else:
                self.id_combo.setEditText(str(env.get("id") or ""))
            for edit, value in ((self.kwargs_edit, env.get("kwargs")), (self.wrappers_edit, env.get("wrappers"))):
                text = _box_text(value)
                if edit.toPlainText().strip() != text:
                    edit.setPlainText(text)
            keys = env.get("info_keys") or []
            text = ", ".join(str(k) for k in keys) if isinstance(keys, list) else str(keys)
            if self.measures_edit.text().replace(" ", "") != text.replace(" ", ""):
                self.measures_edit.setText(text)
            stack = format_value(env.get("frame_stack"))
            if self.frame_stack_edit.text().strip() != stack:
                self.frame_stack_edit.setText(stack)
            limit = format_value(env.get("step_timeout_s"))
            if self.step_limit_edit.text().strip() != limit:
                self.step_limit_edit.setText(limit)
            if env.get("kwargs") or env.get("wrappers") or env.get("frame_stack") or env.get("step_timeout_s"):
                self.options_toggle.setChecked(True)  # a config that sets one shows them
            self._options_title()
        finally:
            self._loading = False

    def show_algo(self, algo: str) -> None:
        if self.algo_combo.currentText() != algo:
            self.algo_combo.setCurrentText(algo)

    def show_spaces(self, text: str, info_keys: tuple[str, ...] = ()) -> None:
        """The spaces in words; ``info_keys`` (seen at a probe episode's end) are offered for the measures."""
        self.spaces_label.setText(text)
        self.measures_edit.setPlaceholderText(f"offered: {', '.join(info_keys)}" if info_keys else "info keys, e.g. co2_kg")

    def show_errors(self, env_error: str | None, algo_error: str | None) -> None:
        for label, message in ((self.env_error, env_error), (self.algo_error, algo_error)):
            label.setText(message or "")
            label.setStyleSheet(f"color: {error_color(self).name()};")
            label.setVisible(bool(message))
        color = error_color(self).name()
        self.algo_combo.setStyleSheet(f"QComboBox {{ border: 1px solid {color}; }}" if algo_error else "")
