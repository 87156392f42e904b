"""The env of a run: a gymnasium id or an entry point, its wrappers, measures and step time limit (``EnvSpec``).

A section of ``core.config.schema.RunConfig`` (``env:``), kept apart from the schema's other sections.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import field_validator, model_validator

from core.config.fields import Section, hp

RESERVED_INFO_KEYS = ("r", "l", "t", "episode", "step", "kind", "reward", "length")  # Monitor's and the record's own
# Short names for the wrappers people use most; any other is a dotted 'package.module.Class'.
WRAPPER_ALIASES = {
    "TimeLimit": "gymnasium.wrappers.TimeLimit",
    "FlattenObservation": "gymnasium.wrappers.FlattenObservation",
    "TimeAwareObservation": "gymnasium.wrappers.TimeAwareObservation",
    "ClipAction": "gymnasium.wrappers.ClipAction",
    "RescaleAction": "gymnasium.wrappers.RescaleAction",
    "GrayscaleObservation": "gymnasium.wrappers.GrayscaleObservation",
    "ResizeObservation": "gymnasium.wrappers.ResizeObservation",
    "AtariWrapper": "stable_baselines3.common.atari_wrappers.AtariWrapper",
}


class WrapperSpec(Section):
    """One gymnasium wrapper around each env: a dotted class name and its keyword arguments."""

    name: str = hp(..., "Wrapper", "A dotted class name such as gymnasium.wrappers.TimeLimit (imported only by the worker).")
    kwargs: dict[str, Any] = hp({}, "Wrapper kwargs", "Keyword arguments of the wrapper.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = WRAPPER_ALIASES.get(v, v).replace(":", ".")
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", v):
            known = ", ".join(WRAPPER_ALIASES)
            raise ValueError(f"wrapper {v!r} is not a dotted class name such as gymnasium.wrappers.TimeLimit (or one of {known})")
        return v


def _wrapper_items(value: Any) -> Any:
    """rl_zoo3's spellings: a name, ``{name: kwargs}``, or ``{name: ..., kwargs: ...}``; one or a list."""
    items = value if isinstance(value, list) else [value] if value not in (None, "") else []
    out: list[Any] = []
    for item in items:
        if isinstance(item, str):
            out.append({"name": item, "kwargs": {}})
        elif isinstance(item, dict) and len(item) == 1 and "name" not in item:
            [(name, kwargs)] = item.items()
            out.append({"name": name, "kwargs": kwargs or {}})
        else:
            out.append(item)
    return out


class EnvSpec(Section):
    """The environment: a registered gymnasium id, or a ``module:Class`` entry point."""

    id: str | None = hp("CartPole-v1", "Environment id", "A registered gymnasium id such as CartPole-v1.")
    entry_point: str | None = hp(None, "Entry point", "A custom env as 'package.module:Class' (imported only by the worker).")
    kwargs: dict[str, Any] = hp({}, "Env kwargs", "Keyword arguments passed to the env constructor.")
    path: str | None = hp(None, "Import folder", "The folder a custom env's module is imported from and its worker runs "
                                                 "in; set at launch to the folder rlpanel was started from, and kept "
                                                 "in the run's config so a resume finds it too.")
    wrappers: list[WrapperSpec] = hp([], "Wrappers",
                                     "Gymnasium wrappers around each env, innermost first: [{name: gymnasium.wrappers.TimeLimit, "
                                     "kwargs: {max_episode_steps: 500}}]; rl_zoo3's spelling works too.")
    frame_stack: int | None = hp(None, "Frame stack", "Stack this many last observations (VecFrameStack; empty: none).",
                                 "frames", ge=2, le=64)
    info_keys: list[str] = hp([], "Env measures", "Numeric keys of the env's info dict at the end of an episode to record "
                                                  "with each episode (e.g. co2_kg, comfort_pct): plotted, and columns of "
                                                  "the results table against the baseline.")
    step_timeout_s: float | None = hp(None, "Step time limit",
                                      "An env step that takes longer ends its env process: a fresh one takes its place "
                                      "and the episode is recorded as cut short (empty: no limit). Needs runtime.vec_env "
                                      "subproc.", "s", gt=0, le=86_400)

    @field_validator("info_keys")
    @classmethod
    def _info_keys(cls, v: list[str]) -> list[str]:
        for key in v:
            if not re.fullmatch(r"[A-Za-z_][\w.]{0,63}", key) or key in RESERVED_INFO_KEYS:
                raise ValueError(f"info key {key!r} is not usable: give the name of a number in the env's info dict "
                                 f"(letters, digits, _ and .; not {', '.join(RESERVED_INFO_KEYS)}: Monitor's own)")
        if len(set(v)) != len(v):
            raise ValueError("info keys are listed twice: name each once")
        return v

    @field_validator("wrappers", mode="before")
    @classmethod
    def _wrappers(cls, v: Any) -> Any:
        return _wrapper_items(v)

    @field_validator("entry_point")
    @classmethod
    def _entry_point(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", v):
            raise ValueError(f"entry_point {v!r} is not 'package.module:Class'")
        return v

    @model_validator(mode="before")
    @classmethod
    def _entry_point_without_id(cls, data: Any) -> Any:
        """An entry point given without an id has no id (not the default CartPole-v1)."""
        if isinstance(data, dict) and data.get("entry_point") and "id" not in data:
            return {**data, "id": None}
        return data

    @model_validator(mode="after")
    def _one_of(self) -> EnvSpec:
        if bool(self.id) == bool(self.entry_point):
            raise ValueError("give exactly one of env.id (a gymnasium id) or env.entry_point ('module:Class')")
        return self

    @property
    def label(self) -> str:
        return self.id or (self.entry_point or "").rsplit(":", 1)[-1]

    def with_import_folder(self, folder: str, code: bool = False) -> EnvSpec:
        """This env with ``path`` set to ``folder`` when it is a custom env (or ``code``: the config names other code,
        an own network) that has none yet."""
        if not (self.entry_point or code) or self.path:
            return self
        return self.model_copy(update={"path": str(folder)})
