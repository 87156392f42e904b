"""Reading the config schema's fields: text <-> value for each kind of editor.

No Qt here: the form (``forms.py``) shows each field as its ``FieldSpec`` (``core.config.field_index``, the schema's
fields shipped as plain data) says, and parses what is typed here, so a new field in ``core.config.schema`` or an
algorithm table (``core.config.algorithms``) needs no UI code.
"""

from __future__ import annotations

from typing import Any

from core.config.field_index import FieldKind


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
        import yaml

        from core.util.yaml_reader import load_yaml

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
