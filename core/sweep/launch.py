"""Starting a trial's runs: one per env x seed, each a normal run tagged with its sweep, trial and member.

The fit estimate screens the trial first: a run that does not fit alone fails the trial ("never launched"); a trial
whose runs do not fit next to the running trials' waits (user attr ``waiting``). Each run's id is recorded in the
trial's user attrs as soon as its folder exists (``SweepRunner.record``), and its status carries the tag, so a runner
started again after a kill adopts what was created and launches only what was not: a trial's group stays whole.
Runs of a trial with seeds share a results group (``group`` in their status, one per env), so the Results tab
shows the trial's seeds as one row with its spread.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Protocol

import optuna
from optuna.trial import FrozenTrial

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.estimate.result import NO_FIT
from core.launch.control import ClusterLaunchError, launch_worker
from core.launch.start import StartError, group_tag, start_run
from core.queue.state import fits_next_to, job_estimate
from core.run.annotations import AnnotationError, annotate
from core.run.status import StatusFields
from core.run.store import RunStore
from core.sweep.folder import SweepFolder
from core.sweep.spec import SweepSpec
from core.sweep.trial_group import Member, member_env, trial_runs


class TrialHost(Protocol):
    """What a launcher needs of its runner (``core.sweep.runner.SweepRunner``), so neither module imports the other."""

    spec: SweepSpec
    folder: SweepFolder
    cluster: dict[str, Any] | None
    members: list[Member]

    def trial(self, frozen: FrozenTrial) -> optuna.Trial: ...

    def fail(self, frozen: FrozenTrial, reason: str) -> None: ...

    def running(self) -> list[FrozenTrial]: ...

    def record(self, frozen: FrozenTrial, key: str, run_id: str) -> None: ...


class TrialLauncher:
    """Starts the runs of a runner's trials (``launch``) and a created run's worker (``start_worker``)."""

    def __init__(self, runner: TrialHost):
        self.runner = runner
        self.estimates: dict[int, list[dict[str, Any]]] = {}  # trial -> its runs' fit estimates

    def launch(self, frozen: FrozenTrial) -> None:
        """Start the trial's runs not yet created; a config that does not fit fails the trial, never launched."""
        sweep, spec = self.runner, self.runner.spec
        created = trial_runs(sweep.trial(frozen).user_attrs)
        todo = [m for m in sweep.members if m.key not in created]
        configs: dict[str, RunConfig] = {}
        try:
            for m in todo:
                configs[m.key] = spec.trial_config(spec.decode(frozen.params), frozen.number, m.env, m.seed)
        except ConfigError as exc:
            sweep.fail(frozen, f"its config is invalid: {exc}")
            return
        if not created and not self._fits(frozen, [configs[m.key] for m in todo]):
            return
        for m in todo:
            if not self._start(frozen, m, configs[m.key]):
                return
        print(f"sweep runner: trial {frozen.number}: {len(sweep.members)} run(s) with {spec.decode(frozen.params)}",
              flush=True)

    def _fits(self, frozen: FrozenTrial, configs: list[RunConfig]) -> bool:
        """Whether the trial's runs fit (alone, then next to the running trials' runs); False after failing it or
        marking it waiting. One estimate per env: a trial's seeds have the same memory."""
        sweep = self.runner
        by_env: dict[str, dict[str, Any]] = {}
        mine = self.estimates.setdefault(frozen.number, [])
        if not mine:
            for cfg in configs:
                env = cfg.env.label
                by_env.setdefault(env, job_estimate(cfg) or {})
                mine.append(by_env[env])
        usable = [e for e in mine if e and "error" not in e]
        for est in usable:
            if not est.get("fits", True):
                sweep.fail(frozen, no_fit_reason(est))
                return False
        others = [e for t in sweep.running() if t.number != frozen.number and trial_runs(t.user_attrs)
                  for e in self.estimates.get(t.number, []) if e and "error" not in e]
        for n, est in enumerate(usable):
            ok, why = fits_next_to(est, others + usable[:n])
            if not ok:
                sweep.trial(frozen).set_user_attr("waiting", why)
                return False
        return True

    def _start(self, frozen: FrozenTrial, member: Member, cfg: RunConfig) -> bool:
        """Start one run of the trial; False when the trial was failed (refused before its run was created)."""
        sweep, spec = self.runner, self.runner.spec
        tags: StatusFields = {"sweep": {"name": spec.name, "study": spec.study_name(), "trial": frozen.number,
                                        "member": member.key}}
        if member.seed is not None:
            env = member_env(spec, member)
            tags["group"] = group_tag(f"sweep-{spec.name}-t{frozen.number}" + (f"-{env}" if len(spec.envs) > 1 else ""),
                                      member.seed, len(spec.seed_list() or []),
                                      f"{spec.name} #{frozen.number}" + (f" {env}" if len(spec.envs) > 1 else ""))
        if sweep.cluster:
            tags["ray"] = sweep.cluster  # launch_worker submits it to that cluster

        def record(run: Path) -> None:  # the run id before its worker starts: a runner started again adopts it
            sweep.record(frozen, member.key, run.name)
            try:
                annotate(run, name=f"{spec.name} #{frozen.number}" + ("" if member.key == "run" else f" {member.key}"),
                         add_tags=("sweep",))
            except (AnnotationError, OSError):
                pass  # the name is a convenience: the status tag is what the sweep reads

        try:
            start_run(RunStore(sweep.folder.runs_dir), cfg, spec.base.preset, extra_status=tags, on_created=record,
                      check_env=False, id_suffix="" if member.seed is None else f"s{member.seed}")
        except (ConfigError, StartError) as exc:  # refused before its run was created
            sweep.fail(frozen, str(exc))
            return False
        except ClusterLaunchError as exc:  # the run says failed with the reason: the next pass fails its trial
            print(f"sweep runner: {exc}", flush=True)
        return True

    def start_worker(self, run_dir: Path) -> None:
        """The worker of a run created and recorded before the runner died (its start's second half)."""
        try:
            launch_worker(run_dir)
        except ClusterLaunchError as exc:  # the run says failed with the reason: the next pass fails its trial
            print(f"sweep runner: {exc}", file=sys.stdout, flush=True)


def no_fit_reason(est: dict[str, Any]) -> str:
    if est.get("on_gpu") and est.get("verdict") == NO_FIT:
        return (f"does not fit on {est.get('gpu_name')}: {est['gpu_bytes'] / 2**20:,.0f} MiB of "
                f"{est['capacity_bytes'] / 2**20:,.0f} MiB GPU memory (fit estimate); never launched")
    return (f"does not fit in host RAM: {est['host_bytes'] / 2**20:,.0f} MiB of "
            f"{est['host_capacity_bytes'] / 2**20:,.0f} MiB (fit estimate); never launched")
