"""The config schema's fields in plain data, shipped as ``field_index.json`` beside this module.

The window's forms need, for each field, its path, title, help (the tooltip), unit, range, kind of editor and choices;
for each section its fields; and the schema defaults and the algorithms' names. Read from the live schema, that means
loading pydantic and every algorithm's table (~0.2 s) before the window's first frame; read from this file, a JSON load.
The file is generated from the live schema (``python -m core.config.field_index --write``) and a test regenerates it
and fails, naming that command, when the two differ: it cannot go stale unnoticed. What a value may be is still the
schema's to say: the window validates with it right after its first frame.

Reading the index (``field_index()``) imports neither pydantic nor the schema; generating it (``build_index``,
``section_fields``) does, inside the functions.
"""

from __future__ import annotations

import copy
import json
import sys
import types
import typing
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

INDEX_FILE = Path(__file__).with_name("field_index.json")
WRITE_COMMAND = "python -m core.config.field_index --write"
# env's own fields are edited by the env picker; its defaults are these (not every EnvSpec field: the picker's)
ENV_DEFAULTS: dict[str, Any] = {"id": "CartPole-v1", "entry_point": None, "kwargs": {}, "wrappers": [], "frame_stack": None,
                                "step_timeout_s": None}


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


@dataclass(frozen=True)
class FieldSpec:
    """One field of the schema at its dotted path: a value (``fields`` None) or a section holding ``fields``."""

    name: str          # its name in the model
    path: str          # the dotted path a config file and --set use (its alias where it has one: policy.class)
    title: str
    description: str   # the one-line help
    tip: str           # the rich-text tooltip: help, range, unit, default and path
    unit: str
    kind: FieldKind
    fields: tuple[FieldSpec, ...] | None = None

    @property
    def key(self) -> str:
        return self.path.rpartition(".")[2]

    def leaf_paths(self, exclude: tuple[str, ...] = ()) -> list[str]:
        """The paths of the values under this section (its nested sections' too), ``exclude`` names left out."""
        out: list[str] = []
        for spec in self.fields or ():
            if spec.name not in exclude:
                out += spec.leaf_paths() if spec.fields is not None else [spec.path]
        return out


@dataclass(frozen=True)
class AlgoEntry:
    """An algorithm as the window lists it: its name, its section of the config, and whether sb3-contrib trains it."""

    name: str
    section: str
    contrib: bool


@dataclass(frozen=True)
class FieldIndex:
    """``RunConfig``'s fields, its defaults and its algorithms."""

    root: FieldSpec                  # RunConfig itself: path "", its fields in declaration order
    defaults: dict[str, Any]         # every field's schema default in the shape of a raw config (read, never changed)
    algorithms: tuple[AlgoEntry, ...]

    @property
    def fields(self) -> tuple[FieldSpec, ...]:
        return self.root.fields or ()

    def section(self, path: str) -> FieldSpec:
        """The field or section at ``path`` (``KeyError`` for a path the schema does not have)."""
        spec = self.root
        for part in path.split(".") if path else []:
            found = next((f for f in spec.fields or () if f.key == part), None)
            if found is None:
                raise KeyError(path)
            spec = found
        return spec

    def algo_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.algorithms)


# --- reading the shipped index -----------------------------------------------------------------

def _spec(data: dict[str, Any]) -> FieldSpec:
    kind = data["kind"]
    fields = data.get("fields")
    return FieldSpec(data["name"], data["path"], data["title"], data["description"], data["tip"], data["unit"],
                     FieldKind(kind["editor"], kind["optional"], kind["integer"], tuple(kind["options"]), kind["editable"]),
                     tuple(_spec(f) for f in fields) if fields is not None else None)


def read_index(text: str) -> FieldIndex:
    data = json.loads(text)
    root = FieldSpec("", "", "Run", "", "", "", FieldKind("section"), tuple(_spec(f) for f in data["fields"]))
    return FieldIndex(root, data["defaults"], tuple(AlgoEntry(a["name"], a["section"], a["contrib"]) for a in data["algorithms"]))


@cache
def field_index() -> FieldIndex:
    """The shipped index (read once)."""
    return read_index(INDEX_FILE.read_text(encoding="utf-8"))


def defaults() -> dict[str, Any]:
    """Every field's schema default, in the shape of a raw config (a copy: the caller's to change)."""
    return copy.deepcopy(field_index().defaults)


# --- generating it from the live schema --------------------------------------------------------

def is_section(annotation: Any) -> TypeGuard[type[BaseModel]]:
    from pydantic import BaseModel

    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _parts(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [p for a in typing.get_args(annotation) for p in _parts(a)]
    if origin is typing.Annotated:
        return _parts(typing.get_args(annotation)[0])
    return [annotation]


def field_kind(info: FieldInfo) -> FieldKind:
    """Pick the editor for a field from its type annotation."""
    from core.config.fields import meta_of

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
    import annotated_types as at

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
    """How a value is shown in its editor; ``parse_text`` (app.configure.fields) reads it back to the same value."""
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
    import yaml  # a mapping or a list (a yaml field): flow text

    return str(yaml.safe_dump(value, default_flow_style=True, width=10**6)).strip()


def section_fields(model: type[BaseModel], prefix: str = "") -> tuple[FieldSpec, ...]:
    """``model``'s fields as ``FieldSpec`` at ``prefix`` (nested sections walked into), read off the live schema."""
    out: list[FieldSpec] = []
    for name, info in model.model_fields.items():
        key = info.alias or name  # the name a config file and --set use (policy.class)
        path = f"{prefix}.{key}" if prefix else key
        if is_section(info.annotation):
            out.append(FieldSpec(name, path, info.title or name, info.description or "", "", "", FieldKind("section"),
                                 section_fields(info.annotation, path)))
        else:
            out.append(FieldSpec(name, path, info.title or key, info.description or "", tooltip(info, path), unit(info),
                                 field_kind(info)))
    return tuple(out)


def model_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_construct().model_dump(mode="json")`` read off the fields alone: a section made by its own class
    is walked into rather than built, so no model's schema is built."""
    from pydantic_core import to_jsonable_python

    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        section = info.annotation
        if info.default_factory is section and is_section(section):
            out[name] = model_defaults(section)
        else:
            out[name] = to_jsonable_python(info.get_default(call_default_factory=True))
    return out


def _field_data(spec: FieldSpec) -> dict[str, Any]:
    kind = spec.kind
    data: dict[str, Any] = {"name": spec.name, "path": spec.path, "title": spec.title, "description": spec.description,
                            "tip": spec.tip, "unit": spec.unit,
                            "kind": {"editor": kind.editor, "optional": kind.optional, "integer": kind.integer,
                                     "options": list(kind.options), "editable": kind.editable}}
    if spec.fields is not None:
        data["fields"] = [_field_data(f) for f in spec.fields]
    return data


def build_index() -> dict[str, Any]:
    """The index's data, from the live schema."""
    from core.config.algorithms.registry import ALGORITHMS
    from core.config.schema import RunConfig

    return {"note": f"generated from core.config.schema by {WRITE_COMMAND}: do not edit",
            "fields": [_field_data(f) for f in section_fields(RunConfig)],
            "defaults": model_defaults(RunConfig) | {"env": ENV_DEFAULTS},
            "algorithms": [{"name": s.name, "section": s.section, "contrib": s.contrib} for s in ALGORITHMS.values()]}


def index_text() -> str:
    """What ``field_index.json`` holds for the live schema."""
    return json.dumps(build_index(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m core.config.field_index",
                                     description="Write (or check) core/config/field_index.json from the config schema.")
    parser.add_argument("--write", action="store_true", help="write the file (else: check it, exit 1 when stale)")
    args = parser.parse_args(argv)
    text = index_text()
    if args.write:
        INDEX_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {INDEX_FILE}")
        return 0
    if not INDEX_FILE.is_file() or INDEX_FILE.read_text(encoding="utf-8") != text:
        print(f"{INDEX_FILE} differs from the schema: run {WRITE_COMMAND}", file=sys.stderr)
        return 1
    print(f"{INDEX_FILE} matches the schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
