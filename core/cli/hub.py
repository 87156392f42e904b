"""``rlpanel hub RUN -o DIR [--checkpoint last|best|STEP|FILE] [--push REPO_ID]``: a run's agent as a Hub model repository.

The folder is written by ``python -m core.agent.hub`` in a child process (this command loads no torch): the model
under the name rl_zoo3 and huggingface_sb3 load, its config and statistics, an evaluation (the stored one of that
checkpoint, else one made now and kept), a replay and a model card. ``--push`` uploads it with huggingface_hub.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.common import CliError, checked_checkpoint, checked_config, emit, find_run, positive_int
from core.launch.agent_child import PolicyToolError, run_policy_tool
from core.launch.agent_results import HUB_TIMEOUT_S, hub_folder_problem, hub_summary, repo_id_problem
from core.run.checkpoints import STEP_FILE
from core.run.layout import BEST_CHECKPOINT, RunDir
from core.util.paths import absolute


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hub", parents=[common], help="write a run's agent as a Hugging Face Hub model folder (and push it)",
                       description="Write RUN's checkpoint as a model repository in the layout rl_zoo3 and huggingface_sb3 "
                                   "use: the model, config.yml, env_kwargs.yml, vec_normalize.pkl, results.json, "
                                   "replay.mp4 and a README.md model card.")
    p.add_argument("run_id", metavar="RUN", help="the run (a unique id prefix is enough)")
    p.add_argument("--checkpoint", default="last", metavar="last|best|STEP|FILE",
                   help="which checkpoint: last (default), best, a step the run keeps, or one of its checkpoint files "
                        "(checkpoints/step_....zip, checkpoints/best.zip)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write (new or empty)")
    p.add_argument("--episodes", type=positive_int, default=10, metavar="N",
                   help="episodes of the evaluation made when the checkpoint has no stored one (default 10)")
    p.add_argument("--no-replay", action="store_true", help="write no replay.mp4 (one episode recorded otherwise)")
    p.add_argument("--overwrite", action="store_true", help="replace the model's files in a folder that has files")
    p.add_argument("--push", metavar="REPO_ID", help="upload the folder to this Hub model repository (USER/NAME); "
                                                     "needs huggingface_hub and your token (hf auth login)")
    p.set_defaults(func=run)


def checkpoint_named(run_dir: Path, which: str) -> str:
    """``last``, ``best`` or a step as given; a checkpoint file of the run as its step (or ``best``). A .zip that is
    not one of the run's checkpoints is one line: a loose model has no statistics or config rlpanel could vouch for."""
    if not which.lower().endswith(".zip"):
        return which
    path = absolute(which)
    folder = RunDir(run_dir).checkpoints.resolve()
    if path.parent == folder and path.name == BEST_CHECKPOINT["model"]:
        return "best"
    found = STEP_FILE.fullmatch(path.name)
    if path.parent != folder or found is None or found.group(2) != ".zip":
        raise CliError(f"--checkpoint {which}: not a checkpoint of run {run_dir.name}; give last, best, a step, or a "
                       f"file in {folder} (e.g. step_000000001024.zip)", 2)
    return str(int(found.group(1)))


def run(args: argparse.Namespace) -> int:
    run_dir = find_run(args)
    output = absolute(args.output)
    problem = hub_folder_problem(output, args.overwrite) or (repo_id_problem(args.push) if args.push else None)
    if problem:
        raise CliError(problem, 2)
    checked_config(run_dir, "published")
    which = checkpoint_named(run_dir, args.checkpoint)
    checked_checkpoint(run_dir, which, args.command)
    tool_args = ["--checkpoint", which, "-o", str(output), "--episodes", str(args.episodes)]
    tool_args += ["--no-replay"] if args.no_replay else []
    tool_args += ["--overwrite"] if args.overwrite else []
    tool_args += ["--push", args.push] if args.push else []
    try:
        result = run_policy_tool("hub", run_dir, *tool_args, timeout=HUB_TIMEOUT_S)
    except PolicyToolError as exc:
        raise CliError(str(exc)) from None
    emit(args, result, lambda: hub_summary(result))
    return 0
