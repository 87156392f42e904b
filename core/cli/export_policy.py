"""``rlpanel export-policy RUN --format onnx|torchscript [-o FILE] [--check]``: a checkpoint's policy as a file.

The work is the ``core.policy.export`` tool, run as a child process (this command loads no torch):
the file takes raw observations and returns the env's own actions, with a JSON sidecar next to it.
``rlpanel export`` is another command: it writes result tables.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cli.common import CliError, emit, runs_dir
from core.run.checkpoints import select_checkpoint
from core.run.policy_child import PolicyToolError, run_policy_tool
from core.run.store import RunStore
from core.util.paths import absolute

FORMATS = ("onnx", "torchscript")
SUFFIX = {"onnx": ".onnx", "torchscript": ".pt"}
TIMEOUT_S = 600  # a large CNN's trace and its 1,000-observation check take well under a minute


def default_name(run_id: str, step: int, fmt: str) -> str:
    """``<run>-step<N>.onnx`` (or ``.pt``): what the window proposes too."""
    return f"{run_id}-step{step}{SUFFIX[fmt]}"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export-policy", parents=[common],
                       help="export a run's policy to ONNX or TorchScript: raw observations in, the env's actions out")
    p.add_argument("run_id", metavar="RUN")
    p.add_argument("--checkpoint", default="last", help="last (default), best, or a step the run keeps")
    p.add_argument("--format", choices=FORMATS, required=True, help="onnx (needs the export extra) or torchscript")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="the file (or folder) to write (default: RUN-stepN.onnx or .pt here); its sidecar is FILE.json")
    p.add_argument("--check", action="store_true",
                   help="run 1,000 observations through the file and through SB3's predict; print the largest difference")
    p.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        run_dir = RunStore(runs_dir(args)).path(args.run_id)
    except KeyError as exc:
        raise CliError(f"{exc.args[0]}; list the runs with: rlpanel runs") from None
    try:
        checkpoint = select_checkpoint(run_dir, args.checkpoint)
    except LookupError as exc:
        raise CliError(str(exc.args[0] if exc.args else exc)) from None
    name = default_name(run_dir.name, checkpoint.step, args.format)
    output = absolute(args.output) if args.output else absolute(name)
    if output.is_dir():  # -o exports/: the default name in that folder
        output = output / name
    if output.exists() and not args.overwrite:
        raise CliError(f"{output} exists; pass --overwrite to replace it or choose another -o FILE", 2)
    if not output.parent.is_dir():
        raise CliError(f"-o {output}: the folder {output.parent} does not exist; create it or choose another file", 2)
    tool_args = ["--checkpoint", args.checkpoint, "--format", args.format, "-o", str(output)]
    try:
        result = run_policy_tool("export", run_dir, *tool_args, *(["--check"] if args.check else []), timeout=TIMEOUT_S)
    except PolicyToolError as exc:
        raise CliError(str(exc)) from None
    emit(args, result, lambda: summary(result))
    return 0


def summary(result: dict[str, Any]) -> str:
    """What was written and, with --check, how close it is to SB3's predict."""
    lines = [f"{result['run']} step {result['checkpoint_step']:,} exported as {result['format']}: {result['file']}",
             f"sidecar: {result['sidecar']}"
             + ("  (observation normalisation baked in)" if result.get("normalization_baked_in") else "")]
    check = result.get("check")
    if check:
        lines.append(f"check: {check['observations']:,} observations, largest difference from SB3's predict "
                     f"{check['max_abs_diff']:.3g}, {check['mismatches']} differing action(s)")
    return "\n".join(lines)
