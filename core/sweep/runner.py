"""The sweep runner process: ``python -m core.sweep.runner RUNS_DIR NAME``.

Detached like the queue runner. Each pass (about once a second) it follows every RUNNING trial
of the study through its run folder: new evaluations are reported to the trial, a trial the
pruner cuts is stopped through the run's graceful stop (``STOP``), an ended run is told to the
study (its objective, pruned, or failed with the reason). Then, while slots are free and the
study has fewer than ``n_trials`` trials, it asks the sampler for the next trial, screens its
config with the fit estimate (one that does not fit is told failed, never launched) and starts
it as a normal run tagged with the sweep and trial number.

No trial runs twice: a trial's run id is a user attribute of the trial, written as soon as the
run folder exists, and the run's ``status.json`` carries ``sweep: {name, trial}`` from the
start, so a runner restarted after a kill finds the run of every RUNNING trial: a live one is
followed again, a dead one (crashed, or stopped by ``sweep stop``) is resumed from its
checkpoint, and a trial whose run was never created is launched with the params it was given.

A sweep with a Ray cluster (``ray`` in its state, kept by a resume) creates its runs naming it,
so ``launch_worker`` submits them there; each pass asks Ray about the live ones.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from core.cluster.jobs import settle_cluster_run
from core.config.errors import ConfigError
from core.fit.result import NO_FIT
from core.notify.run_events import notify_run_event
from core.queue.state import fits_next_to, job_estimate
from core.run.annotations import AnnotationError, annotate
from core.run.control import ClusterLaunchError, RunStateError, launch_worker, request_stop, resume_run
from core.run.layout import RunDir
from core.run.start import StartError, restart_run, start_run
from core.run.states import LIVE
from core.run.status import StatusFields, read_status
from core.run.store import RunStore
from core.sweep.folder import SweepFolder, load_state, write_state
from core.sweep.spec import SweepSpec, parse_sweep
from core.sweep.study import distributions, metric_points, objective_value, open_study
from core.util.procs import process_identity
from core.util.yaml_reader import read_yaml_mapping

MAX_RESUMES = 3  # a trial whose run keeps crashing is failed after this many resumes


class SweepRunner:
    """One sweep's scheduling, a pass at a time (``step``)."""

    def __init__(self, spec: SweepSpec, folder: SweepFolder, study: optuna.Study, cluster: dict[str, Any] | None = None):
        self.spec = spec
        self.folder = folder
        self.study = study
        self.cluster = cluster  # the Ray cluster the trials' runs go to (None: this machine)
        self.estimates: dict[int, dict[str, Any]] = {}
        self._seen: dict[str, tuple[int, int]] = {}  # a run's metrics.jsonl (size, mtime) when last read

    # --- trials -----------------------------------------------------------------------------

    def trial(self, frozen: FrozenTrial) -> optuna.Trial:
        return optuna.Trial(self.study, frozen._trial_id)

    def fail(self, frozen: FrozenTrial, reason: str) -> None:
        self.trial(frozen).set_user_attr("fail_reason", reason[:2000])
        self.study.tell(frozen.number, state=TrialState.FAIL)
        print(f"sweep runner: trial {frozen.number} failed: {reason}", flush=True)

    def running(self) -> list[FrozenTrial]:
        return self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))

    def adopt(self) -> None:
        """Trials whose run was created but not yet recorded (the runner died in between): find it by its tag."""
        missing = {t.number: t for t in self.running() if not t.user_attrs.get("run_id")}
        if not missing:
            return
        for info in RunStore(self.folder.runs_dir).list():
            tag = info.status.sweep or {}
            if tag.get("name") == self.spec.name and tag.get("trial") in missing:
                self.trial(missing[tag["trial"]]).set_user_attr("run_id", info.id)

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
        run_id = frozen.user_attrs.get("run_id")
        return bool(run_id) and read_status(self.folder.runs_dir / str(run_id)).state in LIVE

    def follow(self, frozen: FrozenTrial, stopping: bool) -> None:
        """Bring one RUNNING trial up to date from its run folder."""
        run_id = frozen.user_attrs.get("run_id")
        if not run_id:
            if not stopping:
                self.launch_trial(frozen)
            return
        run_dir = self.folder.runs_dir / run_id
        if self.cluster:
            view = settle_cluster_run(run_dir)  # a job Ray ended without the run saying so: crashed (resumed below)
            if view is not None and view.crashed:
                notify_run_event(run_dir, "crashed", view.crashed, log=_log)
        state = read_status(run_dir).state
        if state == "queued":  # created, but the runner died before its worker started
            if not stopping:
                self._launch(run_dir)
            return
        self.report(frozen, run_dir, prune=state in LIVE and not stopping)
        if state in LIVE:
            if stopping and not frozen.user_attrs.get("stopped_by_sweep"):
                self.trial(frozen).set_user_attr("stopped_by_sweep", True)
                request_stop(run_dir, f"the sweep {self.spec.name} was stopped")
            return
        self.ended(frozen, run_dir, str(state), stopping)

    def ended(self, frozen: FrozenTrial, run_dir: Path, state: str, stopping: bool) -> None:
        """Tell the study how a trial's run ended, or continue a run the sweep stopped or lost."""
        attrs = frozen.user_attrs
        if attrs.get("pruned") and state == "stopped":
            self.study.tell(frozen.number, state=TrialState.PRUNED)
            print(f"sweep runner: trial {frozen.number} pruned at step {attrs.get('pruned_at_step')}", flush=True)
        elif state == "finished":  # a run that reached its budget before a prune's STOP did is a complete trial
            if attrs.get("pruned"):
                print(f"sweep runner: trial {frozen.number} finished before the prune's stop reached it", flush=True)
            value = objective_value(run_dir, self.spec.objective.metric)
            if value is None:
                metric = self.spec.objective.metric
                why = " (no episode ended with that key in its info)" if metric.startswith("info.") else ""
                self.fail(frozen, f"run {run_dir.name} ended with no {metric} to report{why}")
            else:
                self.study.tell(frozen.number, value)
                print(f"sweep runner: trial {frozen.number} finished: {value:g}", flush=True)
        elif state == "failed":
            error = read_status(run_dir).error_message
            self.fail(frozen, f"run {run_dir.name} failed: {error or 'see its worker.log'}")
        elif stopping:
            return  # stopped or crashed while the sweep stops: a resume continues it
        elif state == "crashed" or (state == "stopped" and attrs.get("stopped_by_sweep")):
            self.continue_run(frozen, run_dir)
        else:
            self.fail(frozen, f"run {run_dir.name} was {state} outside the sweep (rlpanel stop, or the window)")

    def continue_run(self, frozen: FrozenTrial, run_dir: Path) -> None:
        """Resume a trial's run from its checkpoint (or from step 0 when it has none)."""
        resumes = int(frozen.user_attrs.get("resumes", 0)) + 1
        if resumes > MAX_RESUMES:
            self.fail(frozen, f"run {run_dir.name} ended {MAX_RESUMES} times without finishing")
            return
        trial = self.trial(frozen)
        trial.set_user_attr("resumes", resumes)
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
                return
            print(f"sweep runner: trial {frozen.number}: run {run_dir.name} had no checkpoint; restarted", flush=True)

    def report(self, frozen: FrozenTrial, run_dir: Path, prune: bool) -> None:
        """Report the run's new evaluations to the trial; stop the run gracefully when the pruner says so."""
        try:
            stat = RunDir(run_dir).metrics.stat()
        except OSError:
            return
        if self._seen.get(run_dir.name) == (stat.st_size, stat.st_mtime_ns):
            return  # nothing new: a long run's records are not read again every second
        self._seen[run_dir.name] = (stat.st_size, stat.st_mtime_ns)
        new = [(s, v) for s, v in metric_points(run_dir, self.spec.objective.metric) if s not in frozen.intermediate_values]
        if not new:
            return
        trial = self.trial(frozen)
        for step, value in new:
            trial.report(value, step)
        if prune and not frozen.user_attrs.get("pruned") and trial.should_prune():
            step = new[-1][0]
            trial.set_user_attr("pruned", True)
            trial.set_user_attr("pruned_at_step", step)
            request_stop(run_dir, f"pruned by sweep {self.spec.name} at step {step:,}")

    # --- launching --------------------------------------------------------------------------

    def launch_new(self) -> None:
        """Ask for trials while slots are free and the study has fewer than ``n_trials``."""
        while True:
            trials = self.study.get_trials(deepcopy=False)
            running = [t for t in trials if t.state == TrialState.RUNNING]
            if len(trials) >= self.spec.n_trials or len(running) >= self.spec.parallel:
                return
            if any(not t.user_attrs.get("run_id") for t in running):
                return  # one waits for room next to the running trials: ask for no more
            asked = self.study.ask(distributions(self.spec))
            self.launch_trial(_frozen(self.study, asked.number))

    def launch_trial(self, frozen: FrozenTrial) -> None:
        """Start a trial's run; a config that does not fit is told failed with the reason, never launched."""
        try:
            cfg = self.spec.trial_config(self.spec.decode(frozen.params), frozen.number)
        except ConfigError as exc:
            self.fail(frozen, f"its config is invalid: {exc}")
            return
        mine = self.estimates.setdefault(frozen.number, job_estimate(cfg) or {})
        if mine and "error" not in mine:
            if not mine.get("fits", True):
                self.fail(frozen, _no_fit_reason(mine))
                return
            others = [self.estimates.get(t.number) or {} for t in self.running() if t.user_attrs.get("run_id")]
            ok, why = fits_next_to(mine, [e for e in others if e and "error" not in e])
            if not ok:
                self.trial(frozen).set_user_attr("waiting", why)
                return
        tags: StatusFields = {"sweep": {"name": self.spec.name, "study": self.spec.study_name(), "trial": frozen.number}}
        if self.cluster:
            tags["ray"] = self.cluster  # launch_worker submits it to that cluster

        def record(run: Path) -> None:  # the run id before its worker starts: a runner started again adopts it
            self.trial(frozen).set_user_attr("run_id", run.name)
            try:
                annotate(run, name=f"{self.spec.name} #{frozen.number}", add_tags=("sweep",))
            except (AnnotationError, OSError):
                pass  # the name is a convenience: the status tag is what the sweep reads

        try:
            started = start_run(RunStore(self.folder.runs_dir), cfg, self.spec.base.preset, extra_status=tags,
                                on_created=record, check_env=False)
        except (ConfigError, StartError) as exc:  # refused before its run was created
            self.fail(frozen, str(exc))
            return
        except ClusterLaunchError as exc:  # the run says failed with the reason: the next pass fails its trial
            _log(str(exc))
            return
        print(f"sweep runner: trial {frozen.number}: run {started.run_dir.name} with {self.spec.decode(frozen.params)}",
              flush=True)

    def _launch(self, run_dir: Path) -> None:
        """The worker of a run created and recorded before the runner died (its start's second half)."""
        try:
            launch_worker(run_dir)
        except ClusterLaunchError as exc:  # the run says failed with the reason: the next pass fails its trial
            _log(str(exc))



def _log(line: str) -> None:
    print(f"sweep runner: {line}", flush=True)


def _frozen(study: optuna.Study, number: int) -> FrozenTrial:
    return next(t for t in study.get_trials(deepcopy=False) if t.number == number)


def _no_fit_reason(est: dict[str, Any]) -> str:
    if est.get("on_gpu") and est.get("verdict") == NO_FIT:
        return (f"does not fit on {est.get('gpu_name')}: {est['gpu_bytes'] / 2**20:,.0f} MiB of "
                f"{est['capacity_bytes'] / 2**20:,.0f} MiB GPU memory (fit estimate); never launched")
    return (f"does not fit in host RAM: {est['host_bytes'] / 2**20:,.0f} MiB of "
            f"{est['host_capacity_bytes'] / 2**20:,.0f} MiB (fit estimate); never launched")


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
        sweep = SweepRunner(spec, folder, study, state.get("ray"))
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
