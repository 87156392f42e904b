"""``rlpanel record RUN -o agent.mp4|agent.gif``: a video of a run's agent playing one of its checkpoints.

The video is made by ``python -m core.agent.record`` in a child process (this command loads no torch);
its one-line error is this command's. ``--all-checkpoints`` plays every kept checkpoint in turn, oldest
first, each captioned with its step: how the agent learned.
"""

from __future__ import annotations

import argparse

from core.cli.common import (
    CliError,
    add_checkpoint_arg,
    checked_checkpoint,
    checked_config,
    emit,
    find_run,
    positive_float,
    positive_int,
)
from core.launch.agent_child import PolicyToolError, run_policy_tool
from core.launch.agent_results import recording_summary
from core.util.paths import absolute

VIDEO_SUFFIXES = (".mp4", ".gif")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("record", parents=[common], help="a video (mp4 or gif) of a run's agent playing",
                       description="Play a checkpoint of RUN and write what the env draws to a video at the env's own "
                                   "frame rate.")
    p.add_argument("run_id", metavar="RUN", help="the run (a unique id prefix is enough)")
    add_checkpoint_arg(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the video: a .mp4 or .gif file")
    p.add_argument("--episodes", type=positive_int, default=1, metavar="N", help="episodes per checkpoint (default 1)")
    p.add_argument("--fps", type=positive_float, metavar="F", help="frames per second (default: the env's own; a GIF at most 50)")
    p.add_argument("--all-checkpoints", action="store_true",
                   help="every kept checkpoint in turn, oldest first, captioned with its step (how it learned)")
    p.add_argument("--stochastic", action="store_true", help="sample the policy's actions (default: its most likely one)")
    p.add_argument("--seed", type=int, metavar="S", help="the env's seed (default: the run's seed + 20,000)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = find_run(args)
    output = absolute(args.output)
    if output.suffix.lower() not in VIDEO_SUFFIXES:
        raise CliError(f"-o {args.output}: the file must end in .mp4 or .gif (e.g. -o agent.mp4)", 2)
    if output.exists() and not args.overwrite:  # said before the run's own problems, as the tool says it
        raise CliError(f"-o {output}: the file exists; choose another name or add --overwrite")
    checked_config(path, "recorded")
    if not args.all_checkpoints:
        checked_checkpoint(path, args.checkpoint, args.command)
    tool_args = ["--checkpoint", args.checkpoint, "-o", str(output), "--episodes", str(args.episodes)]
    tool_args += ["--fps", repr(args.fps)] if args.fps else []
    tool_args += ["--all-checkpoints"] if args.all_checkpoints else []
    tool_args += ["--stochastic"] if args.stochastic else []
    tool_args += ["--seed", str(args.seed)] if args.seed is not None else []
    tool_args += ["--overwrite"] if args.overwrite else []
    try:
        result = run_policy_tool("record", path, *tool_args)
    except PolicyToolError as exc:
        raise CliError(str(exc)) from None
    emit(args, result, lambda: recording_summary(result))
    return 0
