"""``rlpanel evaluate RUN``: play N episodes of a checkpoint and print (and keep) how well it does.

The work is ``python -m core.agent.evaluate`` in a child process (torch is never loaded here);
its result is appended to the run's ``evaluations.jsonl``, which the results table reads.
"""

from __future__ import annotations

import argparse

from core.cli.common import CliError, add_checkpoint_arg, checked_checkpoint, checked_config, emit, find_run
from core.launch.agent_child import PolicyToolError, run_policy_tool
from core.run.evaluations import Evaluation, tool_args


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("evaluate", parents=[common],
                       help="play N episodes of a run's checkpoint (its own VecNormalize statistics) and keep the result")
    p.add_argument("run_id", metavar="RUN", help="the run's id (or a unique start of it)")
    add_checkpoint_arg(p)
    p.add_argument("--episodes", type=int, default=10, metavar="N", help="episodes to play (default 10)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--deterministic", dest="deterministic", action="store_true", default=True,
                     help="the policy's most likely action (default)")
    how.add_argument("--stochastic", dest="deterministic", action="store_false", help="actions sampled from the policy")
    p.add_argument("--seed", type=int, metavar="S", help="the env's seed (default: the run's seed + 20,000)")
    p.add_argument("--device", default="cpu", help="torch device for the policy (default cpu)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.episodes < 1:
        raise CliError(f"--episodes {args.episodes}: give at least 1 episode, e.g. --episodes 10", 2)
    run_dir = find_run(args)
    checked_config(run_dir, "evaluated")
    checked_checkpoint(run_dir, args.checkpoint, args.command)
    try:
        data = run_policy_tool("evaluate", run_dir, *tool_args(args.checkpoint, args.episodes, args.deterministic,
                                                               args.seed, args.device))
    except PolicyToolError as exc:
        raise CliError(str(exc)) from None
    emit(args, data, lambda: f"{run_dir.name}\n{Evaluation.from_json(data).text()}")
    return 0
