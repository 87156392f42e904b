"""The Configure panel's column of forms: one ``SectionForm`` per schema section, the Run and pinned Budget forms,
an algorithm's form built when first shown, the forms below the fold built after the window's first frame, and the
hints and buttons that live in their rows (planned steps, Torch threads, Engine, an own network's Browse...).

``FormsColumn`` is a part of ``ConfigurePanel`` (a mixin: the panel's ``forms`` and ``rows`` are what tests and the
window reach for), split from it by what it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

from app.configure.engine_hint import EngineHint
from app.configure.env_picker import EnvPicker
from app.configure.forms import FieldRow, SectionForm
from app.configure.model import ConfigModel
from app.configure.own_network import BROWSED, add_browse_button
from app.configure.steps_hint import PlannedStepsHint
from app.configure.threads_hint import TorchThreadsHint, threads_here
from app.configure.wheel_guard import WheelGuard, guard_wheel
from core.config.dotted import get_path
from core.config.errors import FieldIssue
from core.config.field_index import FieldSpec, field_index

# Top-level fields with their own widgets (env picker, algorithm combo, fit bar's target combo).
SPECIAL_FIELDS = ("schema_version", "env", "algo", "target_gpu")
# budget fields that scroll with the forms; timesteps, checkpoint and evaluation stay in view
BUDGET_MORE = ("keep_checkpoints", "checkpoint_minutes", "eval_episodes", "stop_at_reward",
               "stop_after_evals_without_improvement", "stop_min_evals", "episodes")
ALGO_SECTIONS = tuple(a.section for a in field_index().algorithms)
# forms below the fold of the forms' column (after the algorithm's): built after the window's first frame
LATER_FORMS = ("policy", "runtime", "budget_more")


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


class FormsColumn:
    """The forms of ``ConfigurePanel``, by section name (``forms``) and by dotted path (``rows``)."""

    model: ConfigModel
    env_picker: EnvPicker
    forms_area: QScrollArea
    wheel_guard: WheelGuard  # set at the panel's end: a form built before it is taken in by the panel's guard_wheel
    _show_issues: Callable[[list[FieldIssue]], None]  # the panel's: rows, the error list and hints
    refresh_values: Callable[[], None]  # the panel's: the model's values everywhere

    def _init_forms(self) -> None:
        # an algorithm's form is built when it is first shown (or asked for): the first frame builds one of them
        self._algo_slots: dict[str, tuple[FieldSpec, str, QWidget, tuple[str, ...]]] = {}  # the later forms' too
        self._slot_paths: dict[str, str] = {}  # a later form's row paths: the form's name
        self.threads_hint: TorchThreadsHint | None = None  # under Torch threads, once the runtime form is built
        self.engine_hint: EngineHint | None = None  # under Engine, likewise
        self.forms: dict[str, SectionForm] = _BuiltOnAsk(self._algo_form)
        self.rows: dict[str, FieldRow] = _BuiltOnAsk(
            lambda path: self._algo_form(self._slot_paths.get(path) or path.partition(".")[0]).rows[path])

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

    def forms_min_width(self) -> int:
        """The forms' column as narrow as its widest row allows, with its scroll bar: never a sideways scroll."""
        forms = self.forms_area.widget()
        assert forms is not None
        content = forms.minimumSizeHint().width()
        bar = self.forms_area.verticalScrollBar().sizeHint().width()
        return content + bar + 2 * self.forms_area.frameWidth()

    def _own_network_picked(self, path: str, ref: str, folder: str) -> None:
        """A class picked with Browse...: set the field; a file outside the launch folder records its folder as the
        run's import folder (``env.path``) when none is set, else the field says why it cannot be imported."""
        current = self.model.state.effective_raw().get("env") or {}
        if folder and current.get("path") not in (None, "", folder):
            self.rows[path].set_error(f"{ref} is in {folder}, but this config imports from {current['path']} (env.path): "
                                      "put the file there, or start rlpanel from its folder")
            return
        if folder:
            self.model.set_field("env.path", folder)
        self.model.set_field(path, ref)
        self.refresh_values()

    def _edited(self, path: str, value: Any) -> None:
        self.model.edit(path, value)
        row = self.rows.get(path)
        if row is not None:
            row.set_changed(self.model.state.is_changed(path))
        if path == "algo":
            self._show_algo_form(str(value))

    def _show_algo_form(self, algo: str) -> None:
        for name in ALGO_SECTIONS:
            shown = name == algo.lower()
            if shown and name in self._algo_slots:
                self._algo_form(name)
            if name in self._algo_slots:
                self._algo_slots[name][2].setVisible(shown)
        self.forms_area.setMinimumWidth(self.forms_min_width())  # the form shown sets how narrow the column may get

    def _show_threads(self) -> None:
        if self.threads_hint is not None:
            self.threads_hint.show_threads(threads_here(self.model.validation.config, self.model.estimate))
        if self.engine_hint is not None:
            self.engine_hint.show_installed()

