"""What the Configure panel edits: a preset plus the user's overrides, validated by core.

Plain Python (no Qt) so the rules of "what counts as changed" can be read and tested alone.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.config.dotted import del_path, get_path, merge, set_path
from core.config.errors import ConfigError, FieldHint, FieldIssue
from core.config.field_index import FieldSpec, defaults, field_index
from core.config.presets import resolve_raw

if TYPE_CHECKING:  # the schema (pydantic) loads at the first validation, after the window's first frame
    from core.config.schema import RunConfig

MISSING = object()


def schema_leaves(raw: dict[str, Any], whole: tuple[str, ...] = ("env",), section: FieldSpec | None = None) -> dict[str, Any]:
    """``{"ppo": {"n_epochs": 10}}`` -> ``{"ppo.n_epochs": 10}``, walking into schema sections only
    (the ``whole`` paths and non-section mappings such as ``env.kwargs`` stay one value); preset
    metadata is left out."""
    section = section or field_index().root
    fields = {spec.key: spec for spec in section.fields or ()}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in ("schema_version", "description", "base") and not section.path:
            continue
        spec = fields.get(key)
        path = f"{section.path}.{key}" if section.path else key
        if spec is not None and spec.fields is not None and isinstance(value, dict) and path not in whole:
            out.update(schema_leaves(value, whole, spec))
        else:
            out[path] = value
    return out


def same_value(a: Any, b: Any) -> bool:
    """Equal as a config value: 1 and 1.0 are, True and 1 are not (a bool is no number here)."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b
    return type(a) is type(b) and a == b


@dataclass
class Validation:
    """The outcome of validating ``preset <- overrides``."""

    raw: dict[str, Any]
    config: RunConfig | None = None
    issues: list[FieldIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hints: list[FieldHint] = field(default_factory=list)


class ConfigState:
    """A preset name and the raw overrides the user typed over it."""

    def __init__(self) -> None:
        self._preset: str | None = None
        self.overrides: dict[str, Any] = {}
        self._defaults = defaults()
        # resolve_raw reads every preset file: cache the preset's part, it changes only with the
        # preset (or when preset files change: ``invalidate``), not on each keystroke.
        self._resolved: tuple[dict[str, Any], list[FieldIssue]] | None = None
        # False until the first validation: the presets are read, not validated (the window's first frame)
        self.presets_checked = True

    @property
    def preset(self) -> str | None:
        return self._preset

    @preset.setter
    def preset(self, name: str | None) -> None:
        self._preset = name
        self._resolved = None

    def invalidate(self) -> None:
        """Preset files changed on disk: resolve the preset again."""
        self._resolved = None

    def _preset_part(self) -> tuple[dict[str, Any], list[FieldIssue]]:
        if self._resolved is None:
            try:
                self._resolved = (resolve_raw(self._preset, {}, self.presets_checked) if self._preset else {}, [])
            except ConfigError as exc:
                self._resolved = ({}, list(exc.issues))
        return self._resolved

    def preset_raw(self) -> dict[str, Any]:
        """The preset's values over the schema defaults (what a reset goes back to)."""
        return merge(self._defaults, self._preset_part()[0])

    def effective_raw(self) -> dict[str, Any]:
        """What the forms show: defaults <- preset <- overrides, valid or not."""
        return merge(self.preset_raw(), self.overrides)

    def value(self, path: str) -> Any:
        return get_path(self.effective_raw(), path)

    def preset_value(self, path: str) -> Any:
        return get_path(self.preset_raw(), path)

    def is_changed(self, path: str) -> bool:
        return get_path(self.overrides, path, MISSING) is not MISSING

    def set(self, path: str, value: Any) -> None:
        """Record an edit; a value equal to the preset's is no override at all."""
        if same_value(value, self.preset_value(path)):
            self.overrides = del_path(self.overrides, path)
        else:
            self.overrides = set_path(self.overrides, path, copy.deepcopy(value))

    def reset(self, path: str) -> None:
        self.overrides = del_path(self.overrides, path)

    def validate(self) -> Validation:
        if not self.presets_checked:
            self.presets_checked = True
            self._resolved = None
        preset_part, preset_issues = self._preset_part()
        if preset_issues:
            return Validation(self.overrides, issues=preset_issues)
        raw = merge(preset_part, self.overrides)  # what resolve_raw(preset, overrides) gives
        from core.config.validate import validate_config  # pydantic and the schema: the first validation loads them

        try:
            result = validate_config(raw)
        except ConfigError as exc:
            return Validation(raw, issues=list(exc.issues))
        return Validation(raw, result.config, [], result.warnings, result.hints)
