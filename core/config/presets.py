"""Presets: partial run configs, built in (``configs/presets``) or the user's (``RLPANEL_HOME/presets``).

Resolution order: schema defaults <- base preset(s) <- preset <- overrides (``--set``, form edits).
A broken preset file is reported with its path and error and never modified; a user preset is
never overwritten unless the caller asks.

The files as read (not validated: the window's first frame) are kept in ``RLPANEL_HOME/cache/presets-read.json``
with each file's name, size and time: a later start whose files are all unchanged reads that one JSON file instead
of parsing YAML (the YAML parser is not even imported then).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config.dotted import merge
from core.config.errors import ConfigError, FieldIssue, issues_text
from core.config.field_index import field_index
from core.config.trust import code_modules
from core.util.files import write_atomic
from core.util.paths import builtin_presets_dir, user_home, user_presets_dir
from core.util.text import is_device_name, safe_name

if TYPE_CHECKING:  # the schema (pydantic) loads where a preset is validated: the presets are read without it (the
    # window's first frame; the algorithms' names come from the shipped field index)
    from core.config.validate import ValidatedConfig


@dataclass
class Preset:
    """One preset file: its partial config, or the error that kept it from loading."""

    name: str
    path: Path
    builtin: bool
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def description(self) -> str:
        return str(self.data.get("description", ""))

    @property
    def summary(self) -> str:
        """The description's first line: what a list of presets shows (a tune's preset holds its whole table)."""
        return self.description.strip().partition("\n")[0].rstrip()

    @property
    def base(self) -> str | None:
        base = self.data.get("base")
        return base if isinstance(base, str) else None

    @property
    def algos(self) -> list[str]:
        """The algorithms this preset tunes: its sections, else its ``algo``, else all."""
        algos = field_index().algo_names()
        covered = [a for a in algos if a.lower() in self.data]
        if self.data.get("algo") in algos:
            covered = [self.data["algo"]] + [a for a in covered if a != self.data["algo"]]
        return covered or list(algos)

    @property
    def overrides(self) -> dict[str, Any]:
        """The partial config without the preset's own metadata."""
        return {k: v for k, v in self.data.items() if k not in ("description", "base")}


def _read(path: Path, builtin: bool) -> Preset:
    from core.util.yaml_reader import read_yaml_mapping

    try:
        data = read_yaml_mapping(path)
    except ValueError as exc:
        return Preset(path.stem, path, builtin, error=str(exc).removeprefix(f"{path}: "))
    problem = metadata_problem(data) or (missing_example(data) if builtin else None)
    if problem:
        return Preset(path.stem, path, builtin, data, error=problem)
    return Preset(path.stem, path, builtin, data)


def missing_example(data: dict[str, Any]) -> str | None:
    """Why a built-in preset that trains an example of the repository's ``examples/`` cannot run here, or None.

    The examples are user code to read and copy, so the wheel does not install them (a top-level ``examples``
    package would clash with other projects'): such a preset works from a source checkout only.
    """
    wanted = [m for m in code_modules(data) if m.split(".", 1)[0] == "examples"]
    folder = builtin_presets_dir().parent.parent / "examples"
    if not wanted or all((folder / Path(*m.split(".")[1:2])).is_dir() for m in wanted):
        return None
    return (f"trains the example {wanted[0]}, which only a source checkout of rlpanel has (its examples/ folder: "
            "git clone the repository and pip install -e . there)")


def metadata_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a preset's own keys (``base``, ``description``), or None."""
    base, description = data.get("base"), data.get("description")
    if base is not None and (not isinstance(base, str) or not base):
        return f"base must be the name of a preset, e.g. base: fast; not {type(base).__name__} {str(base)[:60]}"
    if description is not None and not isinstance(description, str):
        return f"description must be text, not {type(description).__name__}"
    return None


def _chain(name: str, by_name: dict[str, Preset]) -> list[Preset]:
    """The preset and its bases, base-most first; raises on a missing, broken or cyclic base."""
    chain: list[Preset] = []
    current: str | None = name
    while current:
        if any(p.name == current for p in chain):
            raise ConfigError([FieldIssue("base", f"preset {name!r} has a base cycle through {current!r}")])
        preset = by_name.get(current)
        if preset is None:
            known = ", ".join(by_name)
            where = "preset" if current == name else "base"
            raise ConfigError([FieldIssue(where, f"no preset named {current!r}; known: {known}")])
        if preset.error:
            raise ConfigError([FieldIssue("preset", f"preset {preset.name!r} ({preset.path}) is broken: {preset.error}")])
        chain.insert(0, preset)
        current = preset.base
    return chain


_cache: dict[tuple[Any, ...], list[Preset]] = {}


def _folder_stamp(folder: Path) -> tuple[Any, ...]:
    if not folder.is_dir():
        return ()
    return tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.glob("*.yaml")))


def list_presets(checked: bool = True) -> list[Preset]:
    """Built-in presets, then the user's (sorted by name); broken ones carry ``error``.

    Each preset is validated over its base chain (a preset may be valid only on its base).
    The result is cached until a preset file changes (the GUI asks on every keystroke).
    ``checked=False``: the files as read, only a file that cannot be read or whose own keys are wrong marked broken, no
    preset validated (the window's first frame: the first validation builds pydantic's schema, after that frame).
    """
    folders = ((builtin_presets_dir(), True), (user_presets_dir(), False))
    stamp = tuple((str(f), _folder_stamp(f)) for f, _ in folders)
    key = stamp if checked else ("read only", *stamp)
    if key in _cache:
        return [Preset(p.name, p.path, p.builtin, dict(p.data), p.error) for p in _cache[key]]
    found = None if checked else _read_cached(stamp)
    if found is None:
        found = []
        for folder, builtin in folders:
            if folder.is_dir():
                found += [_read(p, builtin) for p in sorted(folder.glob("*.yaml"))]
        if not checked:
            _write_cached(stamp, found)
    if not checked:  # the files as read, kept beside the validated list (the window's first frame reads them once)
        return _keep(key, found)
    from core.config.validate import validate_config

    by_name: dict[str, Preset] = {}
    for preset in found:  # a user preset does not shadow a built-in of the same name
        by_name.setdefault(preset.name, preset)
    for preset in found:
        if preset.error:
            continue
        try:
            raw: dict[str, Any] = {}
            for p in _chain(preset.name, by_name)[:-1]:
                raw = merge(raw, p.overrides)
            validate_config(merge({"algo": preset.algos[0]}, merge(raw, preset.overrides)))
        except ConfigError as exc:
            preset.error = issues_text(exc.issues)
        except Exception as exc:  # noqa: BLE001 - one damaged preset must not take the others down
            preset.error = f"cannot be used: {type(exc).__name__}: {str(exc)[:200]}"
    return _keep(key, found)


def _cached_file() -> Path:
    return user_home() / "cache" / "presets-read.json"


def _read_cached(stamp: tuple[Any, ...]) -> list[Preset] | None:
    """The files as an earlier read found them, if none has changed since (their names, sizes and times); else None."""
    try:
        data = json.loads(_cached_file().read_text(encoding="utf-8"))
        if data["stamp"] != json.loads(json.dumps(stamp)):
            return None
        return [Preset(p["name"], Path(p["path"]), bool(p["builtin"]), dict(p["data"]), p["error"]) for p in data["presets"]]
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or not one this code wrote: the files are read
        return None


def _write_cached(stamp: tuple[Any, ...], found: list[Preset]) -> None:
    """Keep the files as read for the next start, where JSON gives back exactly what the YAML held (not, e.g., a date
    or a number as a key: then the files are read each time)."""
    presets = [{"name": p.name, "path": str(p.path), "builtin": p.builtin, "data": p.data, "error": p.error} for p in found]
    try:
        text = json.dumps({"stamp": stamp, "presets": presets}, allow_nan=False)
        if json.loads(text)["presets"] != presets:
            return
        _cached_file().parent.mkdir(parents=True, exist_ok=True)
        write_atomic(_cached_file(), text)
    except (OSError, ValueError, TypeError):  # a value JSON cannot hold, or a folder that cannot be written
        return


def _keep(key: tuple[Any, ...], found: list[Preset]) -> list[Preset]:
    """Cache ``found`` under ``key`` in place of the older list of its kind (validated or read only); a copy back."""
    for old in [k for k in _cache if (k[:1] == ("read only",)) == (key[:1] == ("read only",))]:
        del _cache[old]
    _cache[key] = found
    return [Preset(p.name, p.path, p.builtin, dict(p.data), p.error) for p in found]


def get_preset(name: str, checked: bool = True) -> Preset:
    presets = list_presets(checked)
    for preset in presets:
        if preset.name == name:
            return preset
    known = ", ".join(p.name for p in presets)
    raise ConfigError([FieldIssue("preset", f"no preset named {name!r}; known: {known}")])


def preset_chain(name: str, checked: bool = True) -> list[Preset]:
    """The preset and its bases, base-most first."""
    presets = list_presets(checked)
    by_name: dict[str, Preset] = {}
    for preset in presets:
        by_name.setdefault(preset.name, preset)
    return _chain(name, by_name)


def resolve_raw(preset: str | None = None, overrides: dict[str, Any] | None = None, checked: bool = True) -> dict[str, Any]:
    """The merged raw config: base preset(s) <- preset <- overrides (defaults come at validation). ``checked=False``:
    the presets are not validated first (``list_presets``)."""
    raw: dict[str, Any] = {}
    for p in preset_chain(preset, checked) if preset else []:
        raw = merge(raw, p.overrides)
    if preset and "algo" not in raw and "algo" not in (overrides or {}):
        raw["algo"] = get_preset(preset, checked).algos[0]
    return merge(raw, overrides or {})


def resolve(preset: str | None = None, overrides: dict[str, Any] | None = None) -> ValidatedConfig:
    """A validated run config from a preset and overrides."""
    from core.config.validate import validate_config

    return validate_config(resolve_raw(preset, overrides), source=f"preset {preset}" if preset else "")


def save_user_preset(name: str, data: dict[str, Any], description: str = "", base: str | None = None,
                     overwrite: bool = False) -> Path:
    """Write a user preset atomically; refuse to replace an existing one unless ``overwrite``."""
    import yaml

    from core.config.validate import strip_ignored, validate_config

    clean = safe_name(name)
    if is_device_name(name):
        raise ConfigError([FieldIssue("name", f"preset name {name!r} is a device name on Windows (CON, PRN, AUX, NUL, "
                                              f"COM1-9, LPT1-9), which cannot be a file there: try {name + '-preset'!r}")])
    problem = metadata_problem({"base": base, "description": description})
    if problem:
        raise ConfigError([FieldIssue("base" if problem.startswith("base") else "description", problem)])
    if not clean or clean != name:
        raise ConfigError([FieldIssue("name", f"preset name {name!r} may use only a-z, 0-9, '.', '_' and '-' "
                                              f"(try {clean or 'my-preset'!r})")])
    builtin = builtin_presets_dir() / f"{clean}.yaml"
    if builtin.exists():
        raise ConfigError([FieldIssue("name", f"{clean!r} is a built-in preset; save under another name (with base: {clean})")])
    path = user_presets_dir() / f"{clean}.yaml"
    if path.exists() and not overwrite:
        raise ConfigError([FieldIssue("name", f"user preset {clean!r} exists ({path}); "
                                              "choose another name or confirm overwrite")])
    body, _ = strip_ignored(data)
    doc = {"description": description or body.pop("description", ""), **({"base": base} if base else {}),
           **{k: v for k, v in body.items() if k not in ("description", "base", "schema_version")}}
    over = {k: v for k, v in doc.items() if k not in ("description", "base")}
    validate_config(merge({"algo": Preset(clean, path, False, doc).algos[0]}, resolve_raw(base, over) if base else over))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, yaml.safe_dump(doc, sort_keys=False))
    return path


def delete_user_preset(name: str) -> None:
    path = user_presets_dir() / f"{safe_name(name)}.yaml"
    if not path.is_file():
        raise ConfigError([FieldIssue("name", f"no user preset named {name!r}")])
    path.unlink()


def rename_user_preset(old: str, new: str) -> Path:
    preset = get_preset(old)
    if preset.builtin:
        raise ConfigError([FieldIssue("name", f"{old!r} is built in and cannot be renamed; duplicate it instead")])
    target = save_user_preset(new, preset.data, preset.description, preset.base)
    preset.path.unlink()
    return target


def diff_against_base(name: str) -> list[tuple[str, Any, Any]]:
    """``(path, base value, preset value)`` for every setting the preset changes over its base."""
    from core.config.schema import RunConfig

    preset = get_preset(name)
    base = resolve(preset.base).config if preset.base else RunConfig()
    mine = resolve(name).config
    out: list[tuple[str, Any, Any]] = []

    def walk(a: Any, b: Any, prefix: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict) and prefix != "env.kwargs":
            for key in dict.fromkeys([*a, *b]):
                walk(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else key)
        elif a != b:
            out.append((prefix, a, b))

    walk(base.model_dump(mode="json"), mine.model_dump(mode="json"), "")
    return out
