"""The building blocks of the schema: a config section and a hyperparameter field.

Every field carries a title, a one-line help (``description``), a range (``ge``/``le``/``gt``)
and a unit in ``json_schema_extra``; the window builds its forms from these and the CLI's
``--set`` paths address them by name.
"""

from __future__ import annotations

import re
import types
import typing
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

# A decimal number as people type it: 100000, 1_000_000, 1e6, 2.5e5, 3.0
_DECIMAL = re.compile(r"[+-]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def hp(default: Any, title: str, help: str, unit: str = "", **constraints: Any) -> Any:
    """A hyperparameter field: default, title, one-line help, unit and range."""
    return Field(default, title=title, description=help, json_schema_extra={"unit": unit}, **constraints)


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated.

    Integer fields take an exactly integral number however it is written (``1e6``, ``2.5e5``,
    ``1_000_000``) and refuse what pydantic would otherwise coerce: ``true`` (1), ``0x10`` and
    fractions (``whole_number``).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("*", mode="before")
    @classmethod
    def _whole_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None or not _integer_field(cls, info.field_name):
            return value
        return whole_number(value, _literals(cls, info.field_name))


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


# Fields several algorithms share, written once.
def learning_rate(default: float) -> Any:
    return hp(default, "Learning rate", "Step size of the optimizer.", "", gt=0, le=1)


def gamma() -> Any:
    return hp(0.99, "Discount (gamma)", "How much future rewards count; closer to 1 looks further ahead.", "", ge=0, le=1)


def entropy_coef() -> Any:
    return hp(0.0, "Entropy coefficient", "Weight of the entropy bonus (exploration).", "", ge=0, le=10)


def value_coef() -> Any:
    return hp(0.5, "Value loss coefficient", "Weight of the value-function loss.", "", ge=0, le=10)


def max_grad_norm(default: float) -> Any:
    return hp(default, "Max gradient norm", "Gradients are clipped to this norm.", "", gt=0, le=1000)
