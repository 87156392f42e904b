"""The sweep runner process: ``python -m core.sweep.runner RUNS_DIR NAME``.

Detached like the queue runner. Each pass (about once a second) it follows every RUNNING trial
of the study through its run folder: new evaluations are reported to the trial, a trial the
pruner cuts is stopped through the run's graceful stop (``STOP``), an ended run is told to the
study (its objective, pruned, or failed with the reason). Then, while slots are free and the
study has fewer than ``n_trials`` trials, it asks the sampler for the next trial, screens its
config with the fit estimate (one that does not fit is told failed, never launched) and starts
it as a normal run tagged with the sweep and trial number.

A trial is one run, or a group of runs (``seeds`` x ``envs``, ``core.sweep.trial_group``): it is followed as a
whole: the pruner sees the group's running mean, and the study is told once none of its runs lives (the mean or
IQM of their objectives; a failed run fails the trial, a crashed one is resumed first).

No run is created twice: a trial's run ids are a user attribute of the trial (``runs``), each written as soon as
its run folder exists, and each run's ``status.json`` carries ``sweep: {name, trial, member}`` from the start, so
a runner restarted after a kill finds the runs of every RUNNING trial: a live one is followed again, a dead one
(crashed, or stopped by ``sweep stop``) is resumed from its checkpoint, and a run never created is launched with
the params its trial was given.

A sweep with a Ray cluster (``ray`` in its state, kept by a resume) creates its runs naming it,
so ``launch_worker`` submits them there; each pass asks Ray about the live ones.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from core.cluster.jobs import settle_cluster_run
from core.launch.control import ClusterLaunchError, RunStateError, request_stop, resume_run
from core.launch.start import restart_run
from core.notify.run_events import notify_run_event
from core.run.layout import RunDir
from core.run.states import LIVE
from core.run.status import read_status
from core.run.store import RunStore
from core.sweep.folder import SweepFolder, load_state, write_state
from core.sweep.launch import TrialLauncher
from core.sweep.spec import SweepSpec, parse_sweep
from core.sweep.study import distributions, metric_points, objective_value, open_study
from core.sweep.trial_group import SINGLE, EnvScale, member_env, members, trial_runs, trial_stats
from core.util.procs import process_identity
from core.util.yaml_reader import read_yaml_mapping

MAX_RESUMES = 3  # a trial whose run keeps crashing is failed after this many resumes


class SweepRunner:
    """One sweep's scheduling, a pass at a time (``step``)."""

    def __init__(self, spec: SweepSpec, folder: SweepFolder, study: optuna.Study, cluster: dict[str, Any] | None = None,
                 scales: dict[str, EnvScale] | None = None):
        self.spec = spec
        self.folder = folder
        self.study = study
        self.cluster = cluster  # the Ray cluster the trials' runs go to (None: this machine)
        self.scales = scales or {}  # env -> its normalisation, for a sweep over several envs (fixed at its start)
        self.members = members(spec)
        self.launcher = TrialLauncher(self)
        self._seen: dict[str, tuple[int, int]] = {}  # a run's metrics.jsonl (size, mtime) when last read

    # --- trials -----------------------------------------------------------------------------

    def trial(self, frozen: FrozenTrial) -> optuna.Trial:
        return optuna.Trial(self.study, frozen._trial_id)

    def fail(self, frozen: FrozenTrial, reason: str) -> None:
        """Tell the trial failed with ``reason``; its runs still going are stopped (a part is never averaged)."""
        for run_dir in self.run_dirs(frozen, fresh=True).values():
            if read_status(run_dir).state in LIVE:
                request_stop(run_dir, f"trial {frozen.number} of sweep {self.spec.name} failed")
        self.trial(frozen).set_user_attr("fail_reason", reason[:2000])
        self.study.tell(frozen.number, state=TrialState.FAIL)
        print(f"sweep runner: trial {frozen.number} failed: {reason}", flush=True)

    def running(self) -> list[FrozenTrial]:
        return self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))

    def run_dirs(self, frozen: FrozenTrial, fresh: bool = False) -> dict[str, Path]:
        """The trial's created runs by member key (a trial from before seeds: its ``run_id``); ``fresh``: as the
        storage has them now (runs recorded since ``frozen`` was read)."""
        runs = trial_runs(self.trial(frozen).user_attrs if fresh else frozen.user_attrs)
        return {key: self.folder.runs_dir / run_id for key, run_id in runs.items()}

    def record(self, frozen: FrozenTrial, key: str, run_id: str) -> None:
        runs = {**trial_runs(self.trial(frozen).user_attrs), key: run_id}
        trial = self.trial(frozen)
        trial.set_user_attr("runs", runs)
        if key == self.members[0].key or not frozen.user_attrs.get("run_id"):
            trial.set_user_attr("run_id", runs.get(self.members[0].key, run_id))

    def adopt(self) -> None:
        """Runs created but not yet recorded (the runner died in between): find them by their tag."""
        running = {t.number: t for t in self.running()}
        missing = {n: t for n, t in running.items() if len(trial_runs(t.user_attrs)) < len(self.members)}
        if not missing:
            return
        for info in RunStore(self.folder.runs_dir).list():
            tag = info.status.sweep or {}
            if tag.get("name") == self.spec.name and tag.get("trial") in missing:
                frozen = _frozen(self.study, tag["trial"])
                key = str(tag.get("member") or SINGLE)
                if key not in trial_runs(frozen.user_attrs):
                    self.record(frozen, key, info.id)

    # --- one pass ---------------------------------------------------------------------------

    def step(self) -> bool:
        """One pass; returns False when the sweep is over (all trials told, or stopped with none live)."""
        stopping = self.folder.stop_request.exists()
        for frozen in self.running():
            self.follow(frozen, stopping)
        if not stopping:
            self.launch_new()
        running = self.running()
        if stopping:
            return any(self._live(t) for t in running)
        return bool(running) or len(self.study.get_trials(deepcopy=False)) < self.spec.n_trials

    def _live(self, frozen: FrozenTrial) -> bool:
        return any(read_status(d).state in LIVE for d in self.run_dirs(frozen).values())

    def follow(self, frozen: FrozenTrial, stopping: bool) -> None:
        """Bring one RUNNING trial up to date from its runs' folders."""
        run_dirs = self.run_dirs(frozen)
        if len(run_dirs) < len(self.members) and not stopping:
            self.launcher.launch(frozen)
            return  # a stopping sweep still follows (and stops) the runs its trial has
        states = {key: self._state(run_dir, stopping) for key, run_dir in run_dirs.items()}
        if None in states.values():
            return  # a run created before the runner died is launched now: followed next pass
        live = {key for key, state in states.items() if state in LIVE}
        self.report(frozen, run_dirs, live, prune=bool(live) and not stopping)
        if stopping and live and not frozen.user_attrs.get("stopped_by_sweep"):
            self.trial(frozen).set_user_attr("stopped_by_sweep", True)
            for key in live:
                request_stop(run_dirs[key], f"the sweep {self.spec.name} was stopped")
        self.ended(_frozen(self.study, frozen.number), run_dirs, {k: str(s) for k, s in states.items()}, stopping)

    def _state(self, run_dir: Path, stopping: bool) -> str | None:
        """The run's state; None for a run created but never started (launched here unless the sweep stops)."""
        if self.cluster:
            view = settle_cluster_run(run_dir)  # a job Ray ended without the run saying so: crashed (resumed below)
            if view is not None and view.crashed:
                notify_run_event(run_dir, "crashed", view.crashed, log=_log)
        state = read_status(run_dir).state
        if state == "queued":  # created, but the runner died before its worker started
            if not stopping:
                self.launcher.start_worker(run_dir)
            return None
        return str(state)

    def ended(self, frozen: FrozenTrial, run_dirs: dict[str, Path], states: dict[str, str], stopping: bool) -> None:
        """Tell the study how a trial ended once none of its runs lives; continue a run the sweep stopped or lost."""
        attrs = frozen.user_attrs
        if len(states) < len(self.members):
            return  # part of the group was never created (the sweep stops): told when a resume has it whole
        failed = [k for k, s in states.items() if s == "failed"]
        if failed:
            error = read_status(run_dirs[failed[0]]).error_message
            self.fail(frozen, f"run {run_dirs[failed[0]].name} failed: {error or 'see its worker.log'}")
            return
        if any(s in LIVE for s in states.values()):
            return
        if attrs.get("pruned") and "stopped" in states.values():
            self.study.tell(frozen.number, state=TrialState.PRUNED)
            print(f"sweep runner: trial {frozen.number} pruned at step {attrs.get('pruned_at_step')}", flush=True)
            return
        if all(s == "finished" for s in states.values()):  # a run that reached its budget before a prune's STOP did
            self.tell_value(frozen, run_dirs)
            return
        if stopping:
            return  # stopped or crashed while the sweep stops: a resume continues it
        for key, state in states.items():
            if state == "crashed" or (state == "stopped" and attrs.get("stopped_by_sweep")):
                if not self.continue_run(frozen, key, run_dirs[key]):
                    return
            elif state != "finished":
                self.fail(frozen, f"run {run_dirs[key].name} was {state} outside the sweep (rlpanel stop, or the "
                                  "window); the trial is not judged on its other runs")
                return

    def tell_value(self, frozen: FrozenTrial, run_dirs: dict[str, Path]) -> None:
        """Tell a trial whose runs all finished its value: the mean (or IQM) of their objectives."""
        if frozen.user_attrs.get("pruned"):
            print(f"sweep runner: trial {frozen.number} finished before the prune's stop reached it", flush=True)
        metric = self.spec.objective.metric
        values: dict[str, float] = {}
        for key, run_dir in run_dirs.items():
            value = objective_value(run_dir, metric)
            if value is None:
                why = " (no episode ended with that key in its info)" if metric.startswith("info.") else ""
                self.fail(frozen, f"run {run_dir.name} ended with no {metric} to report{why}")
                return
            values[key] = value
        stats = trial_stats(self.spec, values, self.scales)
        self.trial(frozen).set_user_attr("values", values)
        if stats.value is None:
            self.fail(frozen, f"no value over its {len(values)} runs")
            return
        self.study.tell(frozen.number, stats.value)
        spread = f" ± {stats.se:.3g} over {stats.n} runs" if stats.se is not None else ""
        print(f"sweep runner: trial {frozen.number} finished: {stats.value:g}{spread}", flush=True)

    def continue_run(self, frozen: FrozenTrial, key: str, run_dir: Path) -> bool:
        """Resume one run of a trial from its checkpoint (or from step 0 when it has none); False when it ended too
        often and the trial was failed."""
        attr = f"resumes:{key}"
        resumes = int(frozen.user_attrs.get(attr, frozen.user_attrs.get("resumes", 0) if key == SINGLE else 0)) + 1
        if resumes > MAX_RESUMES:
            self.fail(frozen, f"run {run_dir.name} ended {MAX_RESUMES} times without finishing; the trial is not "
                              "judged on its other runs")
            return False
        trial = self.trial(frozen)
        trial.set_user_attr(attr, resumes)
        trial.set_user_attr("stopped_by_sweep", False)
        try:
            step, _ = resume_run(run_dir)
            print(f"sweep runner: trial {frozen.number}: resumed run {run_dir.name} from step {step:,}", flush=True)
        except ClusterLaunchError as exc:  # the run says failed with the reason: the next pass fails the trial
            _log(f"trial {frozen.number}: {exc}")
        except RunStateError:
            try:
                restart_run(run_dir)
            except ClusterLaunchError as exc:
                _log(f"trial {frozen.number}: {exc}")
                return True
            print(f"sweep runner: trial {frozen.number}: run {run_dir.name} had no checkpoint; restarted", flush=True)
        return True

    def report(self, frozen: FrozenTrial, run_dirs: dict[str, Path], live: set[str], prune: bool) -> None:
        """Report the group's running mean at each new evaluation step (over the runs that reached it, once no live
        run is still short of it); stop the trial's runs gracefully when the pruner says so."""
        if not self._changed(run_dirs.values()):
            return  # nothing new: a long run's records are not read again every second
        points = {key: dict(self._points(key, run_dir)) for key, run_dir in run_dirs.items()}
        new = []
        for step in sorted({s for p in points.values() for s in p} - set(frozen.intermediate_values)):
            if any(step not in points[k] and max(points[k], default=-1) < step for k in live):
                break  # a live run will reach it yet: the mean waits for it
            have = [p[step] for p in points.values() if step in p]
            new.append((step, sum(have) / len(have)))
        if not new:
            return
        trial = self.trial(frozen)
        for step, value in new:
            trial.report(value, step)
        if prune and not frozen.user_attrs.get("pruned") and trial.should_prune():
            step = new[-1][0]
            trial.set_user_attr("pruned", True)
            trial.set_user_attr("pruned_at_step", step)
            for key in live:
                request_stop(run_dirs[key], f"pruned by sweep {self.spec.name} at step {step:,}")

    def _changed(self, run_dirs: Iterable[Path]) -> bool:
        changed = False
        for run_dir in run_dirs:
            try:
                stat = RunDir(run_dir).metrics.stat()
            except OSError:
                continue
            if self._seen.get(run_dir.name) != (stat.st_size, stat.st_mtime_ns):
                self._seen[run_dir.name] = (stat.st_size, stat.st_mtime_ns)
                changed = True
        return changed

    def _points(self, key: str, run_dir: Path) -> list[tuple[int, float]]:
        """The run's objective as it went, normalised by its env's scale in a sweep over several envs."""
        points = metric_points(run_dir, self.spec.objective.metric)
        member = next((m for m in self.members if m.key == key), None)
        scale = self.scales.get(member_env(self.spec, member) or "") if member else None
        return [(s, scale.normalise(v)) for s, v in points] if scale else points

    # --- launching --------------------------------------------------------------------------

    def launch_new(self) -> None:
        """Ask for trials while slots are free and the study has fewer than ``n_trials``."""
        while True:
            trials = self.study.get_trials(deepcopy=False)
            running = [t for t in trials if t.state == TrialState.RUNNING]
            if len(trials) >= self.spec.n_trials or len(running) >= self.spec.parallel:
                return
            if any(len(trial_runs(t.user_attrs)) < len(self.members) for t in running):
                return  # one waits for room next to the running trials: ask for no more
            asked = self.study.ask(distributions(self.spec))
            self.launcher.launch(_frozen(self.study, asked.number))


def _log(line: str) -> None:
    print(f"sweep runner: {line}", flush=True)


def _frozen(study: optuna.Study, number: int) -> FrozenTrial:
    return next(t for t in study.get_trials(deepcopy=False) if t.number == number)


def run(runs_dir: Path, name: str, poll_s: float = 1.0) -> int:
    folder = SweepFolder(runs_dir, name)
    lock = folder.lock()
    try:
        lock.acquire()
    except RuntimeError:
        print(f"sweep runner: sweep {name} already has a runner", file=sys.stderr)
        return 2
    state = load_state(folder) or {"name": name}
    try:
        spec = parse_sweep(read_yaml_mapping(folder.spec), str(folder.spec))
        state.update(state="running", runner=process_identity(), restarts=int(state.get("restarts", -1)) + 1,
                     error=None, ended_at=None)
        write_state(folder, state)
        study = open_study(spec, folder)
        scales = {env: EnvScale.from_json(v) for env, v in (state.get("scales") or {}).items()}
        sweep = SweepRunner(spec, folder, study, state.get("ray"), scales)
        sweep.adopt()
        print(f"sweep runner: pid {state['runner']['pid']} for sweep {name}", flush=True)
        while sweep.step():
            if folder.stop_request.exists() and state["state"] != "stopping":
                state["state"] = "stopping"
                write_state(folder, state)
            time.sleep(poll_s)
        stopped = folder.stop_request.exists()
        state.update(state="stopped" if stopped else "finished", ended_at=time.time())
        write_state(folder, state)
        print(f"sweep runner: {state['state']}", flush=True)
        return 0
    except Exception:  # noqa: BLE001 - the state must say why the runner ended
        traceback.print_exc()
        state.update(state="failed", error=traceback.format_exc().strip().splitlines()[-1], ended_at=time.time())
        write_state(folder, state)
        return 1
    finally:
        lock.release()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.sweep.runner")
    parser.add_argument("runs_dir", type=Path)
    parser.add_argument("name")
    parser.add_argument("--poll", type=float, default=1.0)
    args = parser.parse_args(argv)
    return run(args.runs_dir.resolve(), args.name, args.poll)


if __name__ == "__main__":
    sys.exit(main())
