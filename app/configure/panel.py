"""The Configure panel: presets, env and algorithm, schema forms, fit bar, errors and Launch.

The panel keeps a ``ConfigState`` (preset + the user's raw overrides) and, 100 ms after the last
edit, validates ``resolve_raw(preset, overrides)`` with ``core``; field messages, the error list,
the fit estimate and the Launch button all follow from that one validation.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QMessageBox, QPushButton, QScrollArea, QVBoxLayout, QWidget

from app.configure.env_picker import KIND_TEXT, EnvPicker
from app.configure.estimator import SpacesCache, estimate_json, target_choices
from app.configure.fields import is_section
from app.configure.fit_bar import FitBox, no_fit_reason
from app.configure.forms import FieldRow, SectionForm
from app.configure.presets_box import PresetsBox
from app.configure.state import ConfigState, Validation
from app.configure.theme import error_color
from core.config.algorithms import ALGORITHMS
from core.config.dotted import get_path
from core.config.errors import FieldIssue
from core.config.schema import EnvSpec, RunConfig
from core.config.spaces import check_spaces
from core.fit.estimate import host_memory_total

# Top-level fields with their own widgets (env picker, algorithm combo, fit bar's target combo).
SPECIAL_FIELDS = ("schema_version", "env", "algo", "target_gpu")
ALGO_SECTIONS = tuple(spec.section for spec in ALGORITHMS.values())
DEBOUNCE_MS = 100


@dataclass
class LaunchRequest:
    """What Launch hands the main window: the validated config and what was known about it."""

    config: RunConfig
    preset: str | None
    warnings: list[str] = field(default_factory=list)
    estimate: dict[str, Any] | None = None


class ConfigurePanel(QWidget):
    """Everything needed to set up a run; emits ``launch_requested(LaunchRequest)``."""

    launch_requested = Signal(object)
    config_changed = Signal(object)    # RunConfig or None
    estimate_changed = Signal(object)  # estimate dict or None

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = ConfigState()
        self._validation = Validation({})
        self._issues: list[FieldIssue] = []
        self._estimate: dict[str, Any] | None = None
        self._host_total = host_memory_total()
        self.spaces = SpacesCache(self)
        self.spaces.ready.connect(lambda _key: self._update_estimate())
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.validate_now)

        self.presets_box = PresetsBox(self.state)
        self.presets_box.preset_selected.connect(self.select_preset)
        self.env_picker = EnvPicker()
        self.env_picker.env_edited.connect(lambda env: self._edited("env", env))
        self.env_picker.algo_edited.connect(lambda algo: self._edited("algo", algo))
        self.forms: dict[str, SectionForm] = {}
        self.rows: dict[str, FieldRow] = {}
        forms_widget = self._build_forms()
        self.fit_box = FitBox()
        self.fit_box.set_targets(target_choices(), "auto")
        self.fit_box.target_changed.connect(lambda target: self._edited("target_gpu", target))
        self.fit_box.suggestion_clicked.connect(self.apply_suggestion)
        self.errors_list = QListWidget()
        self.errors_list.setWordWrap(True)
        self.errors_list.itemActivated.connect(self._focus_issue)
        self.errors_list.itemClicked.connect(self._focus_issue)
        self.errors_list.hide()
        self.warnings_label = QLabel()
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setEnabled(False)
        self.warnings_label.hide()
        self.launch_button = QPushButton("Launch")
        self.launch_button.setToolTip("Start the run (Ctrl+Enter)")
        self.launch_button.setDefault(True)
        self.launch_button.clicked.connect(self.request_launch)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(forms_widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.presets_box, 0)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.fit_box, 0)
        layout.addWidget(self.errors_list, 0)
        layout.addWidget(self.warnings_label, 0)
        layout.addWidget(self.launch_button, 0)
        self.refresh_values()
        self.validate_now()

    def _build_forms(self) -> QWidget:
        """One form per schema section; top-level scalars (such as ``name``) in a Run form."""
        container = QWidget()
        box = QVBoxLayout(container)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.env_picker)
        sections = {n: i for n, i in RunConfig.model_fields.items() if n not in SPECIAL_FIELDS and is_section(i.annotation)}
        scalars = tuple(n for n in RunConfig.model_fields if n in SPECIAL_FIELDS or n in sections)
        self._add_form(box, SectionForm(RunConfig, "", "Run", exclude=scalars), "run")
        for name, info in sections.items():
            title = f"{info.title} hyperparameters" if name in ALGO_SECTIONS else info.title
            self._add_form(box, SectionForm(info.annotation, name, title), name)
        box.addStretch(1)
        width = max(row.unit_label.sizeHint().width() for row in self.rows.values())
        for row in self.rows.values():
            row.unit_label.setFixedWidth(width)
        return container

    def _add_form(self, box: QVBoxLayout, form: SectionForm, name: str) -> None:
        form.edited.connect(self._edited)
        form.reset_requested.connect(self.reset_field)
        self.forms[name] = form
        self.rows.update(form.rows)
        box.addWidget(form)

    # --- public API --------------------------------------------------------------------------

    def current_config(self) -> RunConfig | None:
        self._flush()
        return self._validation.config if not self._issues else None

    def errors(self) -> list[FieldIssue]:
        self._flush()
        return list(self._issues)

    def current_preset(self) -> str | None:
        return self.state.preset

    def current_estimate(self) -> dict[str, Any] | None:
        return self._estimate

    def select_preset(self, name: str | None) -> None:
        """Show preset ``name``: the user's edits are dropped, except the environment they chose."""
        env = get_path(self.state.overrides, "env")
        self.state.preset = name
        self.state.overrides = {}
        if env is not None:
            self.state.set("env", env)
        self.presets_box.select(name)
        self.refresh_values()
        self._schedule()

    def load_config(self, raw: dict[str, Any], preset: str | None = None) -> None:
        """Put a config (e.g. a finished run's) into the forms, as edits over ``preset``."""
        self.state.preset = preset
        self.state.overrides = {}
        self.presets_box.select(preset)
        for path, value in _leaves(raw, RunConfig):
            self.state.set(path, value)
        self.refresh_values()
        self.validate_now()

    def set_field(self, path: str, value: Any) -> None:
        """Set one field as the user would, by its dotted path."""
        self._edited(path, copy.deepcopy(value))
        self.refresh_values()

    def reset_field(self, path: str) -> None:
        self.state.reset(path)
        self.refresh_values()
        self._schedule()

    def apply_suggestion(self, suggestion: dict[str, Any]) -> None:
        """Apply the estimate's suggested fix: set ``path`` to ``new``."""
        self.set_field(str(suggestion["path"]), suggestion["new"])
        self.validate_now()

    def request_launch(self) -> bool:
        """What Launch / Ctrl+Enter does; returns whether a launch was requested."""
        self._flush()
        config = self.current_config()
        if config is None:
            return False
        estimate = self._estimate
        no_fit = estimate and "does not fit" in (estimate.get("verdict"), estimate.get("host_verdict"))
        if no_fit and not self.confirm_no_fit(estimate):
            return False
        self.launch_requested.emit(LaunchRequest(config, self.state.preset, list(self._validation.warnings),
                                                 copy.deepcopy(estimate)))
        return True

    def confirm_no_fit(self, estimate: dict[str, Any]) -> bool:
        """Ask before launching a run the estimate says will not fit (tests replace this)."""
        why = no_fit_reason(estimate)
        answer = QMessageBox.warning(self, "The run does not fit", why + "\n\nLaunch anyway?",
                                     QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                     QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    # --- edits and validation ----------------------------------------------------------------

    def _edited(self, path: str, value: Any) -> None:
        self.state.set(path, value)
        row = self.rows.get(path)
        if row is not None:
            row.set_changed(self.state.is_changed(path))
        if path == "algo":
            self._show_algo_form(str(value))
        self._schedule()

    def _schedule(self) -> None:
        self._timer.start()

    def _flush(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.validate_now()

    def refresh_values(self) -> None:
        """Show the effective values everywhere (after a preset change, reset or load)."""
        raw = self.state.effective_raw()
        for path, row in self.rows.items():
            row.set_value(get_path(raw, path))
            row.set_changed(self.state.is_changed(path))
        self.env_picker.show_env(raw.get("env") or {})
        self.env_picker.show_algo(str(raw.get("algo")))
        self._show_algo_form(str(raw.get("algo")))
        self.fit_box.select_target(str(raw.get("target_gpu") or "auto"))

    def _show_algo_form(self, algo: str) -> None:
        for name in ALGO_SECTIONS:
            self.forms[name].setVisible(name == algo.lower())

    def validate_now(self) -> None:
        self._timer.stop()
        self._validation = self.state.validate()
        self._update_estimate()

    def _update_estimate(self) -> None:
        """Spaces rules and the estimate for the current config; then show every issue."""
        validation = self._validation
        issues = list(validation.issues)
        estimate, why = None, ""
        cfg = validation.config
        if cfg is not None:
            found = self.spaces.get(cfg.env)
            if found is None:
                why = f"reading the spaces of {cfg.env.label}\u2026"
                self.env_picker.show_spaces(why)
            else:
                spaces, error = found
                if spaces is None:
                    issues.append(FieldIssue("env.entry_point" if cfg.env.entry_point else "env.id", error))
                    why = "the environment cannot be created"
                    self.env_picker.show_spaces("")
                else:
                    self.env_picker.show_spaces(spaces_text(spaces))
                    issues += check_spaces(cfg, spaces.action_kind)
                    estimate, why = estimate_json(cfg, spaces, self._host_total)
        else:
            why = "fix the errors below to see the estimate"
            self._show_env_spaces(validation.raw.get("env"))
        self._issues = issues
        self._show_issues(issues)
        if estimate is not None:
            self.fit_box.show_estimate(estimate, self._host_total)
        else:
            self.fit_box.show_unavailable(why)
        self.launch_button.setEnabled(not issues)
        config = cfg if not issues else None
        self.config_changed.emit(config)
        if estimate != self._estimate:
            self._estimate = estimate
            self.estimate_changed.emit(estimate)

    def _show_env_spaces(self, env: Any) -> None:
        """The env's action kind even while another field is invalid (no probe for a bad env)."""
        try:
            spec = EnvSpec.model_validate(env)
        except ValidationError:
            self.env_picker.show_spaces("")
            return
        found = self.spaces.get(spec)
        if found is None:
            self.env_picker.show_spaces(f"reading the spaces of {spec.label}\u2026")
        elif found[0] is not None:
            self.env_picker.show_spaces(spaces_text(found[0]))

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
            row = self.rows.get(issue.path)
            where = f"{row.label.text()} ({issue.path})" if row else (issue.path or "config")
            item = QListWidgetItem(f"{where}: {issue.message}")
            item.setData(Qt.ItemDataRole.UserRole, issue.path)
            item.setForeground(color)
            self.errors_list.addItem(item)
        self.errors_list.setVisible(bool(issues))
        if issues:  # as tall as its lines, up to a limit: the forms keep the space
            height = sum(self.errors_list.sizeHintForRow(i) for i in range(len(issues))) + 6
            self.errors_list.setFixedHeight(min(height, 120))
        warnings = self._validation.warnings
        self.warnings_label.setText("\n".join(f"Note: {w}" for w in warnings))
        self.warnings_label.setVisible(bool(warnings))

    def _focus_issue(self, item: QListWidgetItem) -> None:
        row = self.rows.get(item.data(Qt.ItemDataRole.UserRole))
        if row is not None and row.isVisible():
            row.editor.setFocus()


def spaces_text(spaces: Any) -> str:
    return f"{KIND_TEXT.get(spaces.action_kind, spaces.action_kind)}, observations {spaces.obs_kind} {list(spaces.obs_shape)}"


def _leaves(raw: dict[str, Any], model: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(path, value) for every field of ``raw``, walking into schema sections (env is one value)."""
    out: list[tuple[str, Any]] = []
    for key, value in raw.items():
        info = model.model_fields.get(key)
        path = f"{prefix}{key}"
        if key in ("schema_version", "description", "base") and not prefix:
            continue
        if info is not None and is_section(info.annotation) and isinstance(value, dict) and path != "env":
            out += _leaves(value, info.annotation, f"{path}.")
        else:
            out.append((path, value))
    return out


__all__ = ["ConfigurePanel", "LaunchRequest"]
