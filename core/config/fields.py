"""The building blocks of the schema: a config section and a hyperparameter field.

Every field carries a title, a one-line help (``description``), a range (``ge``/``le``/``gt``)
and a unit in ``json_schema_extra``; the window builds its forms from these and the CLI's
``--set`` paths address them by name.
"""

from __future__ import annotations

import copy
import re
import types
import typing
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.fields import FieldInfo

# A decimal number as people type it: 100000, 1_000_000, 1e6, 2.5e5, 3.0
_DECIMAL = re.compile(r"[+-]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


# Where SB3 takes an algorithm field: "model" (a keyword of the algorithm's constructor), "policy" (inside
# policy_kwargs: RecurrentPPO's LSTM sizes, TQC's quantiles) or "none" (rlpanel's own: SB3 gets it some other way,
# such as train_freq_unit inside train_freq, or not at all, such as auto_batch_cap).
Sb3Target = Literal["model", "policy", "none"]


def hp(default: Any, title: str, help: str, unit: str = "", *, sb3: Sb3Target = "model", knob: bool = False,
       **constraints: Any) -> Any:
    """A hyperparameter field: default, title, one-line help, unit and range.

    ``sb3`` says where SB3 takes it (``Sb3Target``); ``knob`` marks a setting ``rlpanel tune`` varies
    for speed although it changes what the algorithm learns from (the rollout, the batch, the ratio of
    gradient steps to env steps): a tune keeps it unless allowed (``core.throughput.knobs``).
    """
    extra: dict[str, Any] = {"unit": unit}
    if sb3 != "model":
        extra["sb3"] = sb3
    if knob:
        extra["knob"] = True
    return Field(default, title=title, description=help, json_schema_extra=extra, **constraints)


@dataclass(frozen=True)
class FieldMeta:
    """What a field says about itself beyond its value: read by the factory, the zoo export, the tune and the forms."""

    sb3: Sb3Target     # where SB3 takes it
    schedule: bool     # a ``Schedule``: a constant or a schedule over the run
    knob: bool         # a tune knob that changes what is learned


@cache
def field_meta(model: type[BaseModel], name: str) -> FieldMeta:
    return meta_of(model.model_fields[name])


def meta_of(info: FieldInfo) -> FieldMeta:
    """A field's ``FieldMeta`` from its pydantic ``FieldInfo`` (the forms hold the info, not the model)."""
    extra = info.json_schema_extra
    data = extra if isinstance(extra, dict) else {}
    sb3 = data.get("sb3", "model")
    return FieldMeta(sb3="policy" if sb3 == "policy" else "none" if sb3 == "none" else "model",
                     schedule="schedule_range" in data, knob=bool(data.get("knob", False)))


@cache
def fields_where(model: type[BaseModel], sb3: Sb3Target | None = None, knob: bool | None = None,
                 schedule: bool | None = None) -> tuple[str, ...]:
    """The names of ``model``'s fields whose metadata match, in declaration order."""
    out = []
    for name in model.model_fields:
        meta = field_meta(model, name)
        if (sb3 is None or meta.sb3 == sb3) and (knob is None or meta.knob == knob) \
                and (schedule is None or meta.schedule == schedule):
            out.append(name)
    return tuple(out)


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated, and a
    number must be finite (``.nan`` or ``.inf`` passes no range check and breaks training later).

    Integer fields take an exactly integral number however it is written (``1e6``, ``2.5e5``,
    ``1_000_000``) and refuse what pydantic would otherwise coerce: ``true`` (1), ``0x10`` and
    fractions (``whole_number``).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _whole_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None or not _integer_field(cls, info.field_name):
            return value
        return whole_number(value, _literals(cls, info.field_name))

    @field_validator("*", mode="after")
    @classmethod
    def _schedule_bounds(cls, value: Any, info: ValidationInfo) -> Any:
        bounds = _bounds(cls, info.field_name or "")
        if bounds is not None:
            check_schedule(value, *bounds)
        return value


@cache
def _bounds(model: type[BaseModel], name: str) -> tuple[float, float] | None:
    """A schedule field's (exclusive low, inclusive high) from ``schedule_hp``."""
    info = model.model_fields.get(name)
    extra = info.json_schema_extra if info is not None else None
    bounds = extra.get("schedule_range") if isinstance(extra, dict) else None
    if not isinstance(bounds, list):
        return None
    low, high = bounds
    return (float(str(low)), float(str(high)))


def _parts(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [p for a in typing.get_args(annotation) for p in _parts(a)]
    if typing.get_origin(annotation) is typing.Annotated:
        return _parts(typing.get_args(annotation)[0])
    return [annotation]


@cache
def _integer_field(model: type[BaseModel], name: str) -> bool:
    """An ``int`` field (maybe optional or with keywords such as 'auto'), not ``int | float``."""
    info = model.model_fields.get(name)
    parts = _parts(info.annotation) if info is not None else []
    return int in parts and float not in parts


@cache
def _literals(model: type[BaseModel], name: str) -> tuple[Any, ...]:
    parts = _parts(model.model_fields[name].annotation)
    return tuple(v for p in parts if typing.get_origin(p) is Literal for v in typing.get_args(p))


def whole_number(value: Any, keywords: tuple[Any, ...] = ()) -> Any:
    """``1e6`` / ``2.5e5`` / ``"1e6"`` -> an int; ``true``, ``0x10`` and ``2.5`` -> ``ValueError`` with the fix."""
    if value is None or value in keywords and isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise ValueError("a yes/no value is not a number: write a whole number such as 100000 (1e5 is fine)")
    if isinstance(value, str):
        text = value.strip()
        if not _DECIMAL.fullmatch(text):
            if re.fullmatch(r"[+-]?0[xXoObB][0-9a-fA-F_]+", text):
                raise ValueError(f"only decimal numbers are taken: write {int(text.replace('_', ''), 0)}")
            words = " or " + " or ".join(repr(k) for k in keywords if isinstance(k, str)) if keywords else ""
            if text.lower() in ("true", "false", "yes", "no", "on", "off"):
                raise ValueError(f"a yes/no value is not a number: write a whole number such as 100000 (1e5 is fine){words}")
            raise ValueError(f"not a number: write a whole number such as 100000 (1e5 is fine){words}")
        value = float(text.replace("_", ""))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("not a finite number: write a whole number such as 100000")
        if not value.is_integer():
            raise ValueError(f"not a whole number: use {int(value // 1):,} or {int(value // 1) + 1:,}")
        return int(value)
    return value


class LinearSchedule(Section):
    """A value that moves in a straight line from ``start`` (first step) to ``end`` (last step).

    The zoo's ``lin_X`` is ``{schedule: linear, start: X, end: 0}``.
    """

    schedule: Literal["linear"] = hp("linear", "Schedule", "linear: from start to end over the run.")
    start: float = hp(..., "Start", "The value at the first step.")
    end: float = hp(0.0, "End", "The value at the last step.")


def parse_schedule(value: Any) -> Any:
    """``"lin_3e-4"`` -> a linear schedule from 3e-4 to 0; ``"3e-4"`` -> 3e-4; others unchanged."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if text.startswith("lin_"):
            return {"schedule": "linear", "start": float(text[4:]), "end": 0.0}
        return float(text)
    except ValueError:
        raise ValueError("use a number, lin_<start> (linear down to 0, as in rl_zoo3) or "
                         "{schedule: linear, start: X, end: Y}") from None


# A constant, or a schedule over the run (SB3 takes a callable of the progress remaining).
Schedule = typing.Annotated[float | LinearSchedule, BeforeValidator(parse_schedule)]


def schedule_hp(default: float, title: str, help: str, low: float, high: float) -> Any:
    """A ``Schedule`` field: a constant or a schedule, each value in ``(low, high]`` (``FieldMeta.schedule``)."""
    return Field(default, title=title, description=help + " A constant, lin_X (linear to 0) or a linear schedule.",
                 json_schema_extra={"unit": "", "schedule_range": [low, high]})


def check_schedule(value: Any, low: float, high: float) -> None:
    values = [value.start, value.end] if isinstance(value, LinearSchedule) else [value]
    for v in values:
        if not low < v <= high and not (isinstance(value, LinearSchedule) and v == value.end and v == 0 and low == 0):
            raise ValueError(f"{v} is out of range: use a value above {low:g} and at most {high:g}")


def schedule_text(value: Any) -> str:
    """How a schedule reads in messages and tables: ``3e-4`` or ``linear 3e-4 -> 0``."""
    if isinstance(value, LinearSchedule):
        return f"linear {value.start:g} -> {value.end:g}"
    if isinstance(value, dict) and "start" in value:
        return f"linear {value['start']:g} -> {value.get('end', 0.0):g}"
    return f"{value:g}" if isinstance(value, float) else str(value)


# Fields several algorithms share, written once.
def field_of(model: type[BaseModel], name: str, default: Any = ..., help: str | None = None) -> Any:
    """Another algorithm's field, reused (title, help, unit, range), with its own default or help if given.

    Validators are the model's own: a table reusing a validated field applies the same validator.
    """
    info = copy.copy(model.model_fields[name])
    if default is not ...:
        info.default = default
    if help is not None:
        info.description = help
    return info


def learning_rate(default: float) -> Any:
    return schedule_hp(default, "Learning rate", "Step size of the optimizer.", 0, 1)


def gsde() -> Any:
    return hp(False, "Use gSDE", "State-dependent exploration instead of independent Gaussian noise (Box actions only).")


def sde_sample_freq() -> Any:
    return hp(-1, "gSDE sample frequency", "Steps between new noise matrices (-1: only at the start of each rollout).",
              "steps", ge=-1, le=1_000_000)


def gamma() -> Any:
    return hp(0.99, "Discount (gamma)", "How much future rewards count; closer to 1 looks further ahead.", "", ge=0, le=1)


def entropy_coef() -> Any:
    return hp(0.0, "Entropy coefficient", "Weight of the entropy bonus (exploration).", "", ge=0, le=10)


def value_coef() -> Any:
    return hp(0.5, "Value loss coefficient", "Weight of the value-function loss.", "", ge=0, le=10)


def max_grad_norm(default: float) -> Any:
    return hp(default, "Max gradient norm", "Gradients are clipped to this norm.", "", gt=0, le=1000)


class GsdeParams(Section):
    """Generalized State-Dependent Exploration (Box actions): a mixin of the tables whose SB3 class takes it
    (PPO, A2C, TRPO, RecurrentPPO, SAC, TQC, CrossQ)."""

    use_sde: bool = gsde()
    sde_sample_freq: int = sde_sample_freq()
