"""``rlpanel zoo``: import rl_zoo3 hyperparameter files as presets, export a preset or run as a zoo entry."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.common import CliError, emit, runs_dir
from core.config.presets import list_presets, resolve
from core.config.schema import RunConfig
from core.run.store import RunStore, load_run_config
from core.util.files import write_atomic
from core.zoo.export import export_yaml
from core.zoo.importer import import_zoo_file, installed_zoo_file, summary_line
from core.zoo.translate import ZOO_ALGOS


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("zoo", parents=[common], help="import rl_zoo3 hyperparameter files, export a preset or run")

    def usage(_args: argparse.Namespace) -> int:
        p.print_help()
        return 0

    p.set_defaults(func=usage)
    inner = p.add_subparsers(dest="zoo_command", metavar="ACTION")
    imp = inner.add_parser("import", parents=[common], help="turn a zoo file's entries into presets zoo-<algo>-<env>")
    imp.add_argument("source", help="a zoo .yml file, or an algorithm (ppo, sac, ...) to read the installed rl_zoo3's file")
    imp.add_argument("--env", action="append", metavar="ID", help="only this entry (repeatable)")
    imp.add_argument("--overwrite", action="store_true", help="replace user presets of the same name")
    imp.set_defaults(func=run_import)
    exp = inner.add_parser("export", parents=[common], help="write a preset or a run's config as a zoo entry")
    exp.add_argument("source", metavar="PRESET_OR_RUN", help="a preset name or a run id")
    exp.add_argument("--env", metavar="ID", help="the entry's env id (default: the config's)")
    exp.add_argument("--algo", help="for a preset that tunes several algorithms: which one")
    exp.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the file here (default: stdout)")
    exp.set_defaults(func=run_export)


def run_import(args: argparse.Namespace) -> int:
    source = str(args.source)
    is_file = Path(source).exists() or Path(source).suffix in (".yml", ".yaml")
    if not is_file and source.lower() not in ZOO_ALGOS:
        raise CliError(f"{source!r} is neither a .yml file nor an algorithm rlpanel imports ({', '.join(ZOO_ALGOS)})", 2)
    try:
        if not is_file:
            path = installed_zoo_file(source.lower())
            results = import_zoo_file(path, args.env, args.overwrite, zoo_algo=source.lower())
        else:
            results = import_zoo_file(Path(source), args.env, args.overwrite)
    except (FileNotFoundError, ValueError) as exc:
        raise CliError(str(exc), 2) from None
    emit(args, [r.to_json() for r in results],
         lambda: "\n".join([*(r.line() for r in results), summary_line(results)]))
    return 0 if any(r.status != "refused" for r in results) or not results else 1


def _config(args: argparse.Namespace) -> RunConfig:
    name = str(args.source)
    if name in {p.name for p in list_presets()}:
        overrides = {"algo": args.algo.upper()} if args.algo else None
        return resolve(name, overrides).config
    try:
        return load_run_config(RunStore(runs_dir(args)).path(name))
    except (KeyError, FileNotFoundError):
        raise CliError(f"{name!r} is neither a preset nor a run id in {runs_dir(args)}: "
                       "see rlpanel presets and rlpanel runs", 2) from None


def run_export(args: argparse.Namespace) -> int:
    cfg = _config(args)
    try:
        text, notes = export_yaml(cfg, args.env)
    except (ValueError, KeyError) as exc:
        raise CliError(f"cannot export {args.source}: {exc}", 2) from None
    if args.output:
        try:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(args.output, text)
        except OSError as exc:
            raise CliError(f"cannot write {args.output}: {exc.strerror or exc}; choose another --output", 2) from None
    if args.json:
        emit(args, {"source": args.source, "yaml": text, "notes": notes, "path": str(args.output) if args.output else None}, "")
    elif args.output:
        print("\n".join([*(f"note: {n}" for n in notes), f"wrote {args.output}"]))
    else:
        print(text, end="")
    return 0
