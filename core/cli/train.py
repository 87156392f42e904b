"""``rlpanel train``, ``resume`` and ``stop``: launch a detached worker and follow its run.

``train --seeds 5`` (or ``--seeds 3,7,11``) launches a group of seeds at once (``core.launch.start.start_group``)
and waits for all of them, saying each run's end (``core.cli.follow.follow_group``); ``--detach`` prints the
group's id and its runs' ids and returns.

A followed run that crashes with an automatic resume planned is followed through it to its end; the exit code
tells the ends apart (``EXIT_CODES``): 1 is a run that failed or crashed for good, 3 one left (Ctrl-C) while its
automatic resume was still to come.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from core.cli.common import CliError, add_config_args, config_from_args, emit, env_issues, find_run, positive_int, runs_dir
from core.cli.follow import follow, follow_group
from core.config.errors import ConfigError
from core.config.seeds import parse_seeds, seeds_text
from core.config.spaces import EnvSpaces, probe_spaces
from core.config.steps import PlannedSteps, planned_steps
from core.config.validate import ValidatedConfig
from core.estimate.device import device_issue, engine_facts
from core.launch.control import (
    ClusterLaunchError,
    ResumeError,
    RunStateError,
    request_stop,
    resume_run,
    stop_run,
)
from core.launch.start import StartedGroup, StartError, restart_run, start_group, start_run
from core.run.layout import RunDir
from core.run.status import read_status
from core.run.store import RunStore, load_run_config

RESUMES_BY_ITSELF = 3  # the exit code of a followed run left while its automatic resume was still to come
EXIT_CODES = ("exit codes: 0 finished or stopped (or left running by a second Ctrl-C); 1 failed or crashed, nothing "
              "resumes it; 2 a bad command line or config; 3 crashed or failed and resumes by itself at the time said "
              "(an automatic resume is planned; Ctrl-C left it to that)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("train", parents=[common], help="start a run (follows it unless --detach)", epilog=EXIT_CODES)
    add_config_args(p)
    p.add_argument("--seeds", metavar="N|S1,S2,...",
                   help="a group of runs of this config, all at once: 5 is seeds 0-4, 3,7,11 those seeds "
                        "(waits for all; a queue job with seeds runs them a few at a time)")
    p.add_argument("--detach", action="store_true", help="print the run id (a group's id and run ids) and return at once")
    p.set_defaults(func=run_train)

    r = sub.add_parser("resume", parents=[common], help="continue a stopped, crashed or failed run", epilog=EXIT_CODES)
    r.add_argument("run_id")
    r.add_argument("--timesteps", type=positive_int, metavar="N",
                   help="train N more steps (default: what remains of the budget)")
    r.add_argument("--detach", action="store_true", help="print the run id and return at once")
    r.set_defaults(func=run_resume)

    rs = sub.add_parser("restart", parents=[common],
                        help="train an ended run again from step 0 with its config (the old curve is kept as superseded)",
                        epilog=EXIT_CODES)
    rs.add_argument("run_id")
    rs.add_argument("--detach", action="store_true", help="print the run id and return at once")
    rs.set_defaults(func=run_restart)

    s = sub.add_parser("stop", parents=[common], help="stop a run gracefully (checkpoint, then state stopped)")
    s.add_argument("run_id")
    s.add_argument("--timeout", type=float, default=60.0, help="seconds to wait before terminating (default 60)")
    s.add_argument("--no-wait", action="store_true", help="only ask; do not wait or terminate")
    s.set_defaults(func=run_stop)


def _check_spaces_early(args: argparse.Namespace, validated: ValidatedConfig) -> EnvSpaces:
    """Refuse SAC on a discrete env (and DQN on a continuous one), or CUDA this torch lacks, before creating the run."""
    spaces = probe_spaces(validated.config.env)
    issues = env_issues(args, validated.config, spaces)
    if validated.config.runtime.device.startswith("cuda"):  # only then is the torch probe worth its seconds
        issue = device_issue(validated.config, engine_facts(validated.config))
        issues += [issue] if issue else []
    if issues:
        raise ConfigError(issues)
    return spaces


def run_train(args: argparse.Namespace) -> int:
    try:
        seeds = parse_seeds(args.seeds, "--seeds")
    except ConfigError as exc:
        raise CliError(str(exc), 2) from None
    validated = config_from_args(args)
    for warning in validated.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    spaces = _check_spaces_early(args, validated)
    if seeds is not None:
        return _train_group(args, validated, spaces, seeds)
    try:  # a custom env is imported from the folder the command was started in, for a resume too
        started = start_run(RunStore(runs_dir(args)), validated.config, args.preset, validated.warnings, spaces=spaces,
                            import_folder=os.getcwd(), reap=not args.detach)
    except (StartError, ClusterLaunchError) as exc:
        raise CliError(str(exc)) from None
    for note in started.notes:
        print(f"warning: {note}", file=sys.stderr)
    return _detach_or_follow(args, started.run_dir, planned_steps(validated.config))


def _train_group(args: argparse.Namespace, validated: ValidatedConfig, spaces: EnvSpaces, seeds: list[int]) -> int:
    """``train --seeds``: start the group, then say its runs (``--detach``) or wait for all of them."""
    config = validated.config
    if config.runtime.seed is not None:
        print(f"warning: runtime.seed {config.runtime.seed} is replaced by each run's seed (--seeds)", file=sys.stderr)
    try:
        group = start_group(RunStore(runs_dir(args)), config, seeds, args.preset, validated.warnings, spaces=spaces,
                            import_folder=os.getcwd(), reap=not args.detach)
    except (StartError, ClusterLaunchError) as exc:
        raise CliError(str(exc)) from None
    for note in group.notes:
        print(f"warning: {note}", file=sys.stderr)
    plan = planned_steps(config)
    runs: list[dict[str, Any]] = [{"id": run.run_dir.name, "seed": seed, "path": str(run.run_dir)}
                                  for run, seed in zip(group.runs, seeds, strict=True)]
    head = {"group": group.id, "name": group.name, "seeds": seeds, "planned_timesteps": plan.steps if plan else None}
    if args.detach:
        emit(args, {**head, "runs": runs}, lambda: "\n".join([_group_line(group), *(r["id"] for r in runs)]))
        return 0
    print(_group_line(group), file=sys.stderr)
    ends = follow_group([run.run_dir for run in group.runs], seeds)
    for run, end in zip(runs, ends, strict=True):
        run.update(state=end.state, reason=end.reason, resumes_at=end.resumes_at)
    emit(args, {**head, "runs": runs}, lambda: "\n".join(f"{r['id']}: {r['state']}" for r in runs))
    resuming = [r for r in runs if r["resumes_at"] is not None]
    bad = [r for r in runs if r["state"] not in ("finished", "stopped", "running") and r not in resuming]
    if not (bad or resuming):
        return 0
    said = "; ".join(f"{r['id']} {r['state']}: {r['reason']}" for r in [*bad, *resuming][:3])
    if bad:
        raise CliError(f"group {group.id}: {len(bad)} of {len(runs)} runs did not finish: {said}")
    raise CliError(f"group {group.id}: {len(resuming)} of {len(runs)} runs resume by themselves: {said}",
                   RESUMES_BY_ITSELF)


def _group_line(group: StartedGroup) -> str:
    return f"group {group.id}: {len(group.runs)} runs of {group.name} ({seeds_text(group.seeds)}), all at once"


def _detach_or_follow(args: argparse.Namespace, run_dir: Path, plan: PlannedSteps | None) -> int:
    """``plan``: the steps the run trains (None: a baseline's episodes), said first and counted towards."""
    planned = plan.steps if plan else None
    if args.detach:
        emit(args, {"id": run_dir.name, "path": str(run_dir), "planned_timesteps": planned}, run_dir.name)
        return 0
    said = f": {plan.text()}" if plan and plan.differs else ""
    print(f"run {run_dir.name} ({run_dir}){said}", file=sys.stderr)
    end = follow(run_dir, total=planned or 0)
    emit(args, {"id": run_dir.name, "path": str(run_dir), "state": end.state, "reason": end.reason,
                "resumes_at": end.resumes_at}, f"{run_dir.name}: {end.state}")
    if end.resumes_at is not None:
        raise CliError(f"run {run_dir.name} {end.state}: {end.reason}; it goes on without this command: see it with "
                       f"rlpanel runs {run_dir.name}, or in the window", RESUMES_BY_ITSELF)
    if end.state in ("finished", "stopped", "running"):
        return 0
    raise CliError(f"run {run_dir.name} {end.state}: {end.reason}")


def run_resume(args: argparse.Namespace) -> int:
    run_dir = find_run(args)
    try:
        step, total = resume_run(run_dir, args.timesteps, reap=not args.detach)
    except (ResumeError, ClusterLaunchError) as exc:
        raise CliError(str(exc)) from None
    plan = _plan_of(run_dir, step)
    if plan is None:
        print(f"playing the {total:,} episodes of baseline {run_dir.name} again", file=sys.stderr)
    else:  # SB3 counts whole rollouts from the checkpoint's step
        print(f"resuming {run_dir.name} from step {step:,} to {plan.steps:,}"
              + (f" (a budget of {total:,})" if plan.differs else ""), file=sys.stderr)
    return _detach_or_follow(args, run_dir, plan)


def _plan_of(run_dir: Path, start: int) -> PlannedSteps | None:
    """The steps a launched run trains from ``start``, from the config it was launched with."""
    try:
        return planned_steps(load_run_config(run_dir), start)
    except ConfigError as exc:  # resume and restart read the same config first: this is a race with an edit
        raise CliError(f"the run's config no longer validates: {exc}") from None


def run_restart(args: argparse.Namespace) -> int:
    run_dir = find_run(args)
    try:
        attempt = restart_run(run_dir, reap=not args.detach)
    except (RunStateError, StartError, ClusterLaunchError) as exc:
        raise CliError(str(exc)) from None
    except ConfigError as exc:
        raise CliError(f"the run's config no longer validates: {exc}") from None
    print(f"restarting {run_dir.name} from step 0 (attempt {attempt}; the old records are in "
          f"{RunDir(run_dir).superseded.name})", file=sys.stderr)
    return _detach_or_follow(args, run_dir, _plan_of(run_dir, 0))


def run_stop(args: argparse.Namespace) -> int:
    run_dir = find_run(args)
    if args.no_wait:
        request_stop(run_dir)
        how = "requested"
    else:
        try:
            how = stop_run(run_dir, timeout=args.timeout)
        except RunStateError as exc:  # a cluster run whose job could not be stopped through Ray
            raise CliError(str(exc)) from None
    state = read_status(run_dir).state
    emit(args, {"id": run_dir.name, "stop": how, "state": state}, f"{run_dir.name}: stop {how}; state {state}")
    return 0
