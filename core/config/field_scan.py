"""The live schema's fields read into the field index (``core.config.field_index``, ``field_index.json``).

``python -m core.config.field_scan --write`` writes the file; without ``--write`` it checks it (exit 1 when stale).
The forms of a model the index does not hold (a test's own section) are read here too (``section_fields``).
"""

from __future__ import annotations

import json
import sys
import types
import typing
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from core.config.field_index import INDEX_FILE, WRITE_COMMAND, FieldKind, FieldSpec, format_value

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

# env's own fields are edited by the env picker; its defaults are these (not every EnvSpec field: the picker's)
ENV_DEFAULTS: dict[str, Any] = {"id": "CartPole-v1", "entry_point": None, "kwargs": {}, "wrappers": [], "frame_stack": None,
                                "step_timeout_s": None}


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

    parser = argparse.ArgumentParser(prog="python -m core.config.field_scan",
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
