"""The building blocks of the schema: a config section and a hyperparameter field.

Every field carries a title, a one-line help (``description``), a range (``ge``/``le``/``gt``)
and a unit in ``json_schema_extra``; the window builds its forms from these and the CLI's
``--set`` paths address them by name.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def hp(default: Any, title: str, help: str, unit: str = "", **constraints: Any) -> Any:
    """A hyperparameter field: default, title, one-line help, unit and range."""
    return Field(default, title=title, description=help, json_schema_extra={"unit": unit}, **constraints)


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated, and a
    number must be finite (``.nan`` or ``.inf`` passes no range check and breaks training later)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


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
