"""The config schema's fields in plain data, shipped as ``field_index.json`` beside this module.

The window's forms need, for each field, its path, title, help (the tooltip), unit, range, kind of editor and choices;
for each section its fields; and the schema defaults and the algorithms' names. Read from the live schema, that means
loading pydantic and every algorithm's table (~0.2 s) before the window's first frame; read from this file, a JSON load.
The file is generated from the live schema (``python -m core.config.field_scan --write``, ``core.config.field_scan``)
and a test regenerates it and fails, naming that command, when the two differ: it cannot go stale unnoticed. What a
value may be is still the schema's to say: the window validates with it right after its first frame.

Reading the index (``field_index()``) imports neither pydantic nor the schema (nor yaml, but to show a mapping).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

INDEX_FILE = Path(__file__).with_name("field_index.json")
WRITE_COMMAND = "python -m core.config.field_scan --write"


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
