"""``rlpanel presets``: list presets, show one resolved, import a YAML file as a user preset."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from core.cli.common import CliError, emit
from core.config.algorithms.registry import ALGOS
from core.config.presets import get_preset, list_presets, metadata_problem, resolve, save_user_preset
from core.config.trust import code_modules, is_trusted
from core.config.validate import validate_config
from core.util.yaml_reader import read_yaml_mapping


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("presets", parents=[common], help="list presets, show one, import one")
    p.set_defaults(func=run_list)
    inner = p.add_subparsers(dest="presets_command", metavar="ACTION")
    show = inner.add_parser("show", parents=[common], help="the resolved values of a preset, as YAML")
    show.add_argument("name")
    show.add_argument("--algo", help="resolve for this algorithm (default: the preset's first)")
    show.set_defaults(func=run_show)
    imp = inner.add_parser("import", parents=[common], help="save a YAML file as a user preset")
    imp.add_argument("file", type=Path)
    imp.add_argument("--name", help="preset name (default: the file name)")
    imp.add_argument("--overwrite", action="store_true", help="replace a user preset of that name")
    imp.set_defaults(func=run_import)


def run_list(args: argparse.Namespace) -> int:
    presets = list_presets()
    data = [{"name": p.name, "builtin": p.builtin, "algos": p.algos, "base": p.base, "description": p.description,
             "path": str(p.path), "error": p.error, "code": code_modules(p.data)} for p in presets]

    def text() -> str:
        width = max((len(p.name) for p in presets), default=4)
        lines = []
        for p in presets:
            kind = "built-in" if p.builtin else "user"
            what = f"BROKEN: {p.error} ({p.path})" if p.error else p.summary
            if not p.error and p.summary != p.description.strip():  # one line a preset: the rest is in `show`
                what += f" (more: rlpanel presets show {p.name})"
            what += "".join(f" [runs code from {m}]" for m in code_modules(p.data))
            lines.append(f"{p.name:<{width}}  {kind:<8}  {','.join(p.algos):<15}  {what}")
        return "\n".join(lines) or "no presets"

    emit(args, data, text)
    return 0


def run_show(args: argparse.Namespace) -> int:
    preset = get_preset(args.name)
    overrides = {"algo": args.algo.upper()} if args.algo else None
    validated = resolve(preset.name, overrides)
    data = validated.config.model_dump(mode="json")
    for algo in ALGOS:  # sections the preset does not tune are noise here
        if algo not in preset.algos and algo != validated.config.algo:
            data.pop(algo.lower())
    # every line of the description commented: a tune's table in it would otherwise make the output no longer YAML
    head = "\n".join(f"# {line}".rstrip() for line in f"{preset.name}: {preset.description.strip()}".splitlines())
    emit(args, {"preset": preset.name, "config": data, "warnings": validated.warnings},
         lambda: head + "\n" + yaml.safe_dump(data, sort_keys=False).rstrip())
    return 0


def run_import(args: argparse.Namespace) -> int:
    try:
        raw = read_yaml_mapping(args.file)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    name = args.name or args.file.stem
    problem = metadata_problem(raw)
    if problem:
        raise CliError(f"{args.file}: {problem}", 2)
    warnings = validate_config({k: v for k, v in raw.items() if k != "base"}, source=str(args.file)).warnings
    warnings += [f"this preset runs code from {m}: rlpanel imports it only once you trust it (--trust {m}, or the "
                 "window asks before the first launch)" for m in code_modules(raw) if not is_trusted(m)]
    path = save_user_preset(name, raw, raw.get("description", f"imported from {args.file.name}"), raw.get("base"),
                            overwrite=args.overwrite)
    emit(args, {"name": name, "path": str(path), "warnings": warnings},
         lambda: "\n".join([*(f"warning: {w}" for w in warnings), f"saved user preset {name} ({path})"]))
    return 0
