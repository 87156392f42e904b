"""The one launch path: start a new run, a group of seeds, or train an ended run again from step 0
(docs/processes.md).

The window's Launch, ``rlpanel train``, the queue runner, the sweep runner and Restart all come
through here, so the checks before a launch (a runs folder too deep for Windows without long paths, the
free space its checkpoints need, a custom env's import folder) are made once, the same way, with the same
messages. ``launch_worker`` itself (the detached supervisor, or a Ray submission) stays in
``core.launch.control``, which resume uses too.

A group of seeds (``start_group``: ``rlpanel train --seeds``, the Seeds field) is N runs of one config,
each with its own ``runtime.seed`` and status ``group`` {id, seed, size, name}, all started at once like N
launches; the free space is checked for the N together first. A queue job with seeds runs its seeds a few
at a time instead (its ``parallel``), each seed a job of its own launched through ``start_run``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.seeds import with_seed
from core.config.spaces import EnvSpaces, probe_spaces
from core.config.trust import require_trusted_policy
from core.estimate.disk import free_space_problem
from core.estimate.result import FitEstimate
from core.launch.control import RunStateError, launch_worker
from core.run.layout import RunDir
from core.run.path_length import path_problem
from core.run.states import TERMINAL
from core.run.status import StatusFields, read_status, write_status
from core.run.store import RunStore, load_run_config, make_run_id
from core.util.files import replace_retrying, write_atomic
from core.util.jsonl import read_jsonl, repair_torn_tail


class StartError(OSError):
    """A run refused before its folder was created (too little free space, a path too deep for Windows), with the
    reason and the fix."""


@dataclass(frozen=True)
class StartedRun:
    """A run whose worker was started: its folder, the launched process and what the window should say."""

    run_dir: Path
    process: subprocess.Popen[bytes]
    notes: tuple[str, ...] = ()  # a refused breakaway on Windows: the window shows it beside "Launched"


def start_problem(folder: Path, config: RunConfig, spaces: EnvSpaces | None = None, check_env: bool = True,
                  runs: int = 1, id_suffix: str = "", run_id: str | None = None) -> str | None:
    """Why ``runs`` runs of ``config`` must not start in the runs folder ``folder``, or None: a run's deepest path
    past Windows' limit without long paths (``core.run.path_length``: the id ``config`` gets with ``id_suffix``,
    or ``run_id`` where the folder exists), too little free space.

    ``spaces``: the env's, when the caller probed them already (a probe of an entry point is a subprocess).
    An env whose spaces cannot be read raises ``ConfigError``, unless not ``check_env``: then the
    check is skipped and the worker's failure says why (a queue's or sweep's job, whose estimate is advice too).
    An own network (``policy.features_extractor``, ``policy.class``) whose module the user has not trusted raises
    ``ConfigError`` always, before anything imports it.
    """
    too_deep = path_problem(folder, config, id_suffix, run_id)
    if too_deep:
        return too_deep
    if config.is_baseline:  # a baseline writes no checkpoints
        return None
    # an own network is code: refused before anything imports it, a queue's or sweep's job too (ConfigError: its job fails)
    require_trusted_policy(config.policy)
    if spaces is None:
        try:
            spaces = probe_spaces(config.env)
        except ConfigError:
            if check_env:
                raise
            return None
    return free_space_problem(folder, config, spaces, runs)


def start_run(store: RunStore, config: RunConfig, preset: str | None = None, warnings: Sequence[str] = (), *,
              spaces: EnvSpaces | None = None, import_folder: str | None = None,
              extra_status: StatusFields | None = None, on_created: Callable[[Path], None] | None = None,
              check_env: bool = True, reap: bool = True, id_suffix: str = "") -> StartedRun:
    """Check, create the run folder and start its worker detached.

    ``import_folder``: where a custom env without ``env.path`` is imported from (the window and
    ``rlpanel train`` pass the folder they were started in; it is recorded in the config, so a
    resume imports from there too). ``extra_status``: fields the status starts with (a queue's or
    sweep's tag, ``ray``: the run is submitted to that cluster). ``on_created`` runs between the
    creation and the launch: the queue and sweep runners record the run id there, so a runner
    started again adopts the run instead of launching it twice. ``check_env``: see ``start_problem``
    (the runners pass False: an untrusted or missing env fails its run, which the job reports, as before).
    ``id_suffix`` ends the run's id (a seed of a group: ``s3``).

    Raises ``StartError`` (no folder created) when the disk cannot hold the run's checkpoints or its deepest path
    would pass Windows' limit without long paths,
    ``ConfigError`` when the env cannot be probed, ``ClusterLaunchError`` when a Ray cluster did
    not take the run (the run is then recorded ``failed`` with the reason).
    """
    if import_folder is not None:
        config = config.with_import_folder(import_folder)
    problem = start_problem(store.root, config, spaces, check_env, id_suffix=id_suffix)
    if problem:
        raise StartError(problem)
    run_dir = store.create(config, preset=preset, warnings=list(warnings), extra_status=extra_status, id_suffix=id_suffix)
    if on_created is not None:
        on_created(run_dir)
    notes: list[str] = []
    process = launch_worker(run_dir, reap=reap, notes=notes)
    return StartedRun(run_dir, process, tuple(notes))


@dataclass(frozen=True)
class StartedGroup:
    """The runs of a group of seeds that were started, in the order of their seeds."""

    id: str
    name: str
    runs: tuple[StartedRun, ...]
    seeds: tuple[int, ...]
    notes: tuple[str, ...] = ()  # the load of N runs at once, the runs' own notes: said beside "launched group"


def group_name(config: RunConfig) -> str:
    """What a view calls a group: its config's name, else ``PPO CartPole-v1``."""
    return config.name or f"{config.algo} {config.env.label}"


def new_group_id(config: RunConfig, size: int) -> str:
    """``20261126-213011-ppo-cartpole-v1-x5-3fa2``: like a run id, its size, and 4 hex digits so two groups of
    one config launched in the same second stay two."""
    return f"{make_run_id(config)}-x{size}-{secrets.token_hex(2)}"


def group_tag(group_id: str, seed: int, size: int, name: str) -> dict[str, Any]:
    """status.json's ``group`` of one run of a group (core.results.grouping reads it)."""
    return {"id": group_id, "seed": seed, "size": size, "name": name}


def group_load_note(size: int, cores: int | None = None) -> str | None:
    """What a user should know before ``size`` runs start at once on this machine's ``cores``, or None."""
    cores = cores or os.cpu_count() or 1
    if size <= cores:
        return None
    return (f"{size} runs at once on {cores} CPU cores: each trains slower than alone; a queue job with seeds runs "
            "them a few at a time (its parallel jobs)")


def group_memory_problem(estimate: FitEstimate, size: int) -> str | None:
    """Why ``size`` runs of one config would not fit at once here, or None: the run's estimate (this machine's)
    ``size`` times past 95 % of the card's or the host's memory, the margin the queue keeps between its jobs."""
    mine = estimate.this_machine or estimate
    gib = 2**30
    if size < 2:
        return None
    if mine.on_gpu and size * mine.gpu_bytes > 0.95 * mine.capacity_bytes:
        where, each, capacity = mine.gpu_name or "the GPU", mine.gpu_bytes, mine.capacity_bytes
    elif size * mine.host_bytes > 0.95 * mine.host_capacity_bytes:
        where, each, capacity = "host RAM", mine.host_bytes, mine.host_capacity_bytes
    else:
        return None
    return (f"{size} runs at once need about {size * each / gib:,.1f} GiB of {where}'s {capacity / gib:,.1f} GiB "
            f"({each / gib:,.2f} GiB each); launch fewer seeds, or run them as a queue job with seeds, a few at a time")


def start_group(store: RunStore, config: RunConfig, seeds: Sequence[int], preset: str | None = None,
                warnings: Sequence[str] = (), *, spaces: EnvSpaces | None = None, import_folder: str | None = None,
                extra_status: StatusFields | None = None, reap: bool = True) -> StartedGroup:
    """Start one run of ``config`` per seed, all at once: a group (``runtime.seed`` set per run, status ``group``).

    The free space is checked for all of them before the first is created (``StartError``, nothing created),
    then each run as it is launched (``start_run``); a run refused after others started says which started.
    ``ConfigError`` as ``start_run``. The runs' ids end in ``-s<seed>``.
    """
    if not seeds:
        raise ValueError("a group needs at least one seed")
    if import_folder is not None:
        config = config.with_import_folder(import_folder)
    if spaces is None and not config.is_baseline:
        spaces = probe_spaces(config.env)  # once for the group, not once per run
    longest = max((f"s{seed}" for seed in seeds), key=len)  # each run's id ends in -s<seed>
    problem = start_problem(store.root, config, spaces, runs=len(seeds), id_suffix=longest)
    if problem:
        raise StartError(problem)
    group_id, name = new_group_id(config, len(seeds)), group_name(config)
    started: list[StartedRun] = []
    for seed in seeds:
        status: StatusFields = {**(extra_status or {}), "group": group_tag(group_id, seed, len(seeds), name)}
        try:
            started.append(start_run(store, with_seed(config, seed), preset, warnings, spaces=spaces, extra_status=status,
                                     reap=reap, id_suffix=f"s{seed}"))
        except StartError as exc:
            if not started:
                raise
            ids = ", ".join(run.run_dir.name for run in started)
            raise StartError(f"{exc}; {len(started)} of the group's {len(seeds)} runs started already ({ids})") from None
    note = group_load_note(len(seeds))
    notes = tuple(dict.fromkeys([*([note] if note else []), *(n for run in started for n in run.notes)]))
    return StartedGroup(group_id, name, tuple(started), tuple(seeds), notes)


def restart_run(run_dir: Path, reap: bool = True) -> int:
    """Train an ended run again from step 0 with its config; returns the new attempt's number.

    The old attempt's records move to ``metrics.superseded.jsonl`` (its curve is kept, not
    drawn as this run's), its checkpoints to ``checkpoints.superseded/`` (a later resume must not
    pick up the old weights), and its summary goes: it described the old attempt. A disk that
    cannot hold the new attempt's checkpoints is refused first (``StartError``), the run left as it was.
    """
    run_dir = Path(run_dir)
    layout = RunDir(run_dir)
    status = read_status(run_dir)
    state = status.state
    if state not in TERMINAL:
        raise RunStateError(f"run {run_dir.name} is {state}; stop it first (rlpanel stop {run_dir.name}), then restart it")
    config = load_run_config(run_dir)  # a config that no longer validates is refused here, not by a dying worker
    # it ran before: its worker says what changed; its folder exists, so its own id is counted
    problem = start_problem(run_dir.parent, config, check_env=False, run_id=run_dir.name)
    if problem:
        raise StartError(problem)
    repair_torn_tail(layout.metrics)
    old = read_jsonl(layout.metrics)
    if old:
        with open(layout.superseded, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in old))
    write_atomic(layout.metrics, "")
    if layout.checkpoints.exists():
        shutil.rmtree(layout.superseded_checkpoints, ignore_errors=True)  # an older restart's: superseded twice
        replace_retrying(layout.checkpoints, layout.superseded_checkpoints)
    layout.summary.unlink(missing_ok=True)
    layout.stop_request.unlink(missing_ok=True)
    attempt = (status.attempt or 1) + 1
    write_status(run_dir, state="stopped", started_at=None, ended_at=None, train_time_s=0.0, resumed_from=None,
                 restarted_at=time.time(), exit_reason=f"restarted from step 0 (attempt {attempt})", error=None)
    launch_worker(run_dir, reap=reap)
    return attempt
