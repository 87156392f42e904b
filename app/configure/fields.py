"""Reading the config schema: what kind of editor a field needs, its help, and text <-> value.

No Qt here: the form (``forms.py``) asks this module how to show and parse each field, so a
new field in ``core.config.schema`` or an algorithm table (``core.config.algorithms``) needs no UI code.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

import annotated_types as at
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from core.config.fields import meta_of
from core.util.yaml_reader import load_yaml


@dataclass(frozen=True)
class FieldKind:
    """How one field is edited.

    ``editor`` is one of: ``bool``, ``choice`` (fixed options; an optional yes/no field is a
    choice of empty, true and false), ``number`` (int/float, typed as text so 1e6 and 1,000,000
    work), ``schedule`` (a constant or a linear schedule), ``text``, ``layers`` (net_arch
    lists/dicts), ``yaml`` (anything else, typed as YAML flow text). ``options`` are the choices or suggestions;
    ``editable`` means free text is allowed beside them.
    """

    editor: str
    optional: bool = False
    integer: bool = False
    options: tuple[str, ...] = ()
    editable: bool = False


def _parts(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [p for a in typing.get_args(annotation) for p in _parts(a)]
    if origin is typing.Annotated:
        return _parts(typing.get_args(annotation)[0])
    return [annotation]


def is_section(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def field_kind(info: FieldInfo) -> FieldKind:
    """Pick the editor for a field from its type annotation."""
    parts = _parts(info.annotation)
    optional = type(None) in parts
    parts = [p for p in parts if p is not type(None)]
    literals = tuple(str(v) for p in parts if typing.get_origin(p) is Literal for v in typing.get_args(p))
    others = [p for p in parts if typing.get_origin(p) is not Literal]
    if meta_of(info).schedule:  # schedule_hp: a constant or a schedule over the run
        return FieldKind("schedule", optional)
    if others == [bool]:
        return FieldKind("choice", True, options=("", "true", "false")) if optional else FieldKind("bool")
    if not others and literals:
        return FieldKind("choice", optional, options=literals)
    if others and all(p in (int, float) for p in others):
        return FieldKind("number", optional, integer=float not in others, options=literals, editable=bool(literals))
    if others and all(p in (int, float, str) for p in others):
        # e.g. SAC ent_coef: a number or a keyword such as 'auto'; offer a string default as a choice
        hints = literals + ((info.default,) if isinstance(info.default, str) else ())
        if any(p in (int, float) for p in others):
            return FieldKind("number", optional, integer=float not in others, options=hints, editable=True)
        return FieldKind("text", optional, options=hints, editable=True)
    if others and all(_is_int_layers(p) for p in others):
        return FieldKind("layers", optional)
    return FieldKind("yaml", optional)


def _is_int_layers(annotation: Any) -> bool:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return args == (int,)
    if origin is dict:
        return len(args) == 2 and args[0] is str and _is_int_layers(args[1])
    return False


def unit(info: FieldInfo) -> str:
    extra = info.json_schema_extra
    return str(extra.get("unit", "")) if isinstance(extra, dict) else ""


def range_text(info: FieldInfo) -> str:
    """'1 to 1024', '> 0 and <= 1', or '' from the field's ge/gt/le/lt constraints."""
    low = high = ""
    for m in info.metadata:
        if isinstance(m, at.Ge):
            low = f">= {format_value(m.ge)}"
        elif isinstance(m, at.Gt):
            low = f"> {format_value(m.gt)}"
        elif isinstance(m, at.Le):
            high = f"<= {format_value(m.le)}"
        elif isinstance(m, at.Lt):
            high = f"< {format_value(m.lt)}"
    if low.startswith(">=") and high.startswith("<="):
        return f"{low[3:]} to {high[3:]}"
    return " and ".join(p for p in (low, high) if p)


def tooltip(info: FieldInfo, path: str) -> str:
    """The field's help as rich text: description, range, unit, default and its --set path."""
    lines = [f"<b>{info.title or path}</b>", info.description or ""]
    details = [("Range", range_text(info)), ("Unit", unit(info)),
               ("Default", "empty" if info.default is None else format_value(info.default)), ("Path", path)]
    lines += [f"{k}: {v}" for k, v in details if v]
    return "<br>".join(_escape(line) if not line.startswith("<b>") else line for line in lines if line)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def format_value(value: Any, kind: FieldKind | None = None) -> str:
    """How a value is shown in its editor; ``parse_text`` reads it back to the same value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if kind is not None and kind.editor == "layers":
        if isinstance(value, dict):
            return "; ".join(f"{k}: {format_value(v, kind)}" for k, v in value.items())
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()


def parse_text(text: str, kind: FieldKind) -> Any:
    """Text typed into an editor -> the raw value put in the overrides.

    What cannot be parsed is passed on as the text itself, so the schema's own message
    (from ``validate_config``) is what the user reads at the field.
    """
    stripped = text.strip()
    if not stripped:
        return None if kind.optional else ""
    if kind.editor == "number":
        return _parse_number(stripped, kind.integer)
    if kind.editor == "layers":
        return _parse_layers(stripped)
    if kind.editor == "choice" and kind.options == ("", "true", "false"):
        return stripped == "true"
    if kind.editor == "yaml":
        try:
            return load_yaml(stripped, "the field")
        except (yaml.YAMLError, ValueError):  # bad syntax or over a limit: the schema names the field
            return stripped
    return stripped


def _parse_number(text: str, integer: bool) -> Any:
    compact = text.replace("_", "").replace(",", "").replace(" ", "")
    try:
        return int(compact)
    except ValueError:
        pass
    try:
        number = float(compact)
    except ValueError:
        return text
    return int(number) if integer and number.is_integer() else number


def _parse_layers(text: str) -> Any:
    """``256, 256`` -> [256, 256]; ``pi: 256,256; vf: 128`` -> {"pi": [256, 256], "vf": [128]}."""
    try:
        if ":" in text:
            out: dict[str, list[int]] = {}
            for part in filter(None, (p.strip() for p in text.replace("\n", ";").split(";"))):
                key, _, sizes = part.partition(":")
                out[key.strip()] = _int_list(sizes)
            return out
        return _int_list(text)
    except ValueError:
        return text


def _int_list(text: str) -> list[int]:
    return [int(p) for p in text.replace(",", " ").replace("[", " ").replace("]", " ").split()]
