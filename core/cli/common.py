"""What every command shares: the error type, JSON-or-text output, the runs folder, config options."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config.algorithms.baselines import BASELINES
from core.config.algorithms.registry import ALGOS, normalize_algo
from core.config.dotted import merge, set_path
from core.config.errors import ConfigError, FieldIssue
from core.config.presets import resolve_raw
from core.config.trust import trust
from core.config.validate import ValidatedConfig, choose_env, parse_set, validate_config
from core.run.checkpoints import Checkpoint, select_checkpoint
from core.run.store import RunStore, load_run_config, unusable_config
from core.util.paths import absolute, default_runs_dir
from core.util.yaml_reader import read_yaml_mapping

if TYPE_CHECKING:
    from core.config.schema import RunConfig
    from core.config.spaces import EnvSpaces


class CliError(Exception):
    """A user-facing failure: one line on stderr and exit ``code``."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def runs_dir(args: argparse.Namespace) -> Path:
    """The runs folder, absolute (a relative ``--runs-dir`` is taken from the folder rlpanel runs in)."""
    return absolute(args.runs_dir) if getattr(args, "runs_dir", None) else default_runs_dir()


def find_run(args: argparse.Namespace) -> Path:
    """The folder of ``args.run_id`` (an id or a unique start of one), or a ``CliError`` that says how to list them."""
    return run_path(RunStore(runs_dir(args)), args.run_id)


def run_path(store: RunStore, run_id: str) -> Path:
    """``find_run`` for one of several ids."""
    try:
        return store.path(run_id)
    except KeyError as exc:
        raise CliError(f"{exc.args[0]}; list them with: rlpanel runs") from None


def add_checkpoint_arg(p: argparse.ArgumentParser) -> None:
    """``--checkpoint last|best|STEP``: the agent's commands (evaluate, watch, record, export-policy)."""
    p.add_argument("--checkpoint", default="last", metavar="last|best|STEP",
                   help="which checkpoint: last (default), best (with periodic evaluation on) or a step the run keeps")


def checked_checkpoint(run_dir: Path, which: str, command: str) -> Checkpoint:
    """The checkpoint ``--checkpoint`` names, said at once when the run does not keep it (before a tool loads torch);
    for ``last``, a line on stderr when damaged newer ones were passed over (the tool plays the older one)."""
    try:
        checkpoint = select_checkpoint(run_dir, which)
    except LookupError as exc:
        raise CliError(str(exc.args[0] if exc.args else exc)) from None
    if checkpoint.note:
        print(f"rlpanel {command}: {checkpoint.note}", file=sys.stderr)
    return checkpoint


def checked_config(run_dir: Path, doing: str) -> None:
    """The run's config.yaml, read as the tool will read it: a damaged one (bad YAML, missing, over a limit) said in
    one line before a tool starts (``doing``: what could not be done, e.g. "evaluated")."""
    try:
        load_run_config(run_dir)
    except ConfigError as exc:
        raise CliError(unusable_config(run_dir, exc, doing)) from None


def emit(args: argparse.Namespace, data: Any, text: str | Callable[[], str]) -> None:
    """Print ``data`` as JSON with ``--json``, else the human ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        print(text() if callable(text) else text)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (steps, episodes)."""
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number, e.g. 10000") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1, e.g. 10000")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number, e.g. 16") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a finite number above 0, e.g. 16")
    return value


def add_config_args(p: argparse.ArgumentParser) -> None:
    """The options that describe a run config; shared by ``train`` and ``estimate``."""
    p.add_argument("--preset", help="start from this preset (rlpanel presets lists them)")
    p.add_argument("--config", type=Path, metavar="FILE", help="a YAML run config (partial is fine)")
    p.add_argument("--algo", type=normalize_algo, choices=ALGOS + BASELINES, help="algorithm, or a baseline (random, constant)")
    p.add_argument("--episodes", type=int, metavar="N", help="episodes a baseline plays (budget.episodes)")
    p.add_argument("--env", metavar="ID", help="gymnasium id, or 'package.module:Class'")
    p.add_argument("--timesteps", type=int, metavar="N", help="total timesteps")
    p.add_argument("--name", help="run name (part of the run id)")
    p.add_argument("--device", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                   help="override one setting, e.g. --set ppo.n_epochs=20 (repeatable)")
    p.add_argument("--trust", action="append", default=[], metavar="MODULE",
                   help="let rlpanel import MODULE, the code an env entry point names (remembered; repeatable)")


def config_from_args(args: argparse.Namespace) -> ValidatedConfig:
    """Preset <- --config file <- --set <- the dedicated flags, validated (``--trust`` is remembered first)."""
    for module in getattr(args, "trust", []):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", module):
            raise CliError(f"--trust {module[:80]!r} is not a module name (e.g. my_envs or pkg.envs)", 2)
        trust(module)
    overrides: dict[str, Any] = {}
    if args.config:
        try:
            overrides = merge(overrides, read_yaml_mapping(args.config))
        except ValueError as exc:
            raise CliError(f"--config: {exc}") from None
    for item in args.set:
        path, value = parse_set(item)
        overrides = set_path(overrides, path, value)
    if args.algo:
        overrides["algo"] = args.algo
    if args.env:
        overrides = choose_env(overrides, args.env)
    if args.timesteps is not None:
        overrides = set_path(overrides, "budget.total_timesteps", args.timesteps)
    if getattr(args, "episodes", None) is not None:
        overrides = set_path(overrides, "budget.episodes", args.episodes)
    if args.name:
        overrides["name"] = args.name
    if args.device:
        overrides = set_path(overrides, "runtime.device", args.device)
    return validate_config(resolve_raw(args.preset, overrides), source=f"preset {args.preset}" if args.preset else "")


def env_issues(args: argparse.Namespace, cfg: RunConfig, spaces: EnvSpaces) -> list[FieldIssue]:
    """What the env refuses of ``cfg`` (``check_spaces``). When it refuses the algorithm the preset set (no
    ``--algo``: ``--preset laptop-8gb --env CartPole-v1`` trains SAC on discrete actions), the issue names the preset
    and the flag that fixes it; the window keeps the algorithm it showed instead (``core.config.preset_env``)."""
    from core.config.preset_env import clash
    from core.config.spaces import check_spaces, either, trainers

    issues = check_spaces(cfg, spaces.action_kind, spaces)
    preset = getattr(args, "preset", None)
    if not preset or getattr(args, "algo", None) or resolve_raw(preset).get("algo") != cfg.algo:
        return issues
    reason = clash(preset, cfg.algo, cfg.env.label, spaces.action_kind)
    if reason is None:
        return issues
    fix = f"{reason}: choose one that trains it with --algo ({either(trainers(spaces.action_kind))})"
    return [FieldIssue("algo", fix) if issue.path == "algo" else issue for issue in issues]
