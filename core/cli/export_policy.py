"""``rlpanel export-policy RUN --format onnx|torchscript [-o FILE] [--check]``: a checkpoint's policy as a file.

The work is the ``core.agent.export`` tool, run as a child process (this command loads no torch):
the file takes raw observations and returns the env's own actions, with a JSON sidecar next to it.
``rlpanel export`` is another command: it writes result tables.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.common import CliError, add_checkpoint_arg, checked_checkpoint, checked_config, emit, find_run
from core.launch.agent_child import PolicyToolError, run_policy_tool
from core.launch.agent_results import FORMATS, TIMEOUT_S, default_name, existing_export, summary
from core.util.paths import absolute


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export-policy", parents=[common],
                       help="export a run's policy to ONNX or TorchScript: raw observations in, the env's actions out")
    p.add_argument("run_id", metavar="RUN")
    add_checkpoint_arg(p)
    p.add_argument("--format", choices=FORMATS, required=True, help="onnx or torchscript")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="the file (or folder) to write (default: RUN-stepN.onnx or .pt here); its sidecar is FILE.json")
    p.add_argument("--check", action="store_true",
                   help="run 1,000 observations through the file and through SB3's predict; print the largest difference")
    p.add_argument("--overwrite", action="store_true", help="replace FILE (and FILE.json) if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    run_dir = find_run(args)
    checked_config(run_dir, "exported")
    checkpoint = checked_checkpoint(run_dir, args.checkpoint, args.command)
    name = default_name(run_dir.name, checkpoint.step, args.format)
    output = absolute(args.output) if args.output else absolute(name)
    if output.is_dir():  # -o exports/: the default name in that folder
        output = output / name
    existing = existing_export(output)
    if existing is not None and not args.overwrite:  # the policy or its sidecar: both are replaced together
        raise CliError(f"{existing} exists; pass --overwrite to replace it or choose another -o FILE", 2)
    if not output.parent.is_dir():
        raise CliError(f"-o {output}: the folder {output.parent} does not exist; create it or choose another file", 2)
    tool_args = ["--checkpoint", args.checkpoint, "--format", args.format, "-o", str(output)]
    tool_args += ["--overwrite"] if args.overwrite else []
    try:
        result = run_policy_tool("export", run_dir, *tool_args, *(["--check"] if args.check else []), timeout=TIMEOUT_S)
    except PolicyToolError as exc:
        raise CliError(str(exc)) from None
    emit(args, result, lambda: summary(result))
    return 0
