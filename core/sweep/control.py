"""Start, stop and resume a sweep, and what ``sweep status`` says; the runner is a detached process."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from core.config.errors import ConfigError, FieldIssue
from core.launch.control import request_stop
from core.run.states import LIVE
from core.run.status import read_status
from core.sweep.folder import SWEEP_ACTIVE, SweepFolder, load_state, read_state, save_spec_data, sweep_names, write_state
from core.sweep.scales import ScaleError, resolve_scales
from core.sweep.spec import SweepSpec, parse_sweep, spec_data
from core.sweep.study import best_row, load_study, param_importances, storage_url, trial_row
from core.sweep.trial_group import EnvScale
from core.util.locks import LockBusy, held_briefly
from core.util.yaml_reader import read_yaml_mapping

RUNNER_MODULE = "core.sweep.runner"


class SweepError(RuntimeError):
    """A sweep that cannot be started, stopped or resumed as asked, with the reason and what to do."""


def start_sweep(runs_dir: Path, spec: SweepSpec, reap: bool = False, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start a new sweep with a detached runner; refused when one of that name exists (resume it instead).

    ``cluster`` (``core.cluster.target.ClusterTarget.to_json()``) sends every trial's run to that Ray
    cluster; the sweep's state keeps it, so a resume goes on there.
    """
    folder = SweepFolder(runs_dir, spec.name)
    folder.path.mkdir(parents=True, exist_ok=True)
    try:
        with held_briefly(folder.start_lock, what=f"sweep {spec.name}"):
            if load_state(folder) is not None:
                raise SweepError(f"sweep {spec.name} already exists in {folder.runs_dir}: continue it with "
                                 f"rlpanel sweep resume {spec.name}, or give the sweep file another name")
            try:  # fixed for the sweep's life: every trial judged on the same scale
                scales = {env: s.to_json() for env, s in resolve_scales(spec, folder.runs_dir).items()}
            except ScaleError as exc:
                raise SweepError(str(exc)) from None
            save_spec_data(folder, spec_data(spec))
            folder.stop_request.unlink(missing_ok=True)
            state = {"name": spec.name, "state": "running", "created_at": time.time(), "launched_at": time.time(),
                     "runner": None, "storage": storage_url(spec, folder), **({"ray": cluster} if cluster else {}),
                     **({"scales": scales} if scales else {})}
            write_state(folder, state)
            launch_runner(folder, reap=reap)
    except LockBusy as exc:
        raise SweepError(str(exc)) from None
    return state


def resume_sweep(runs_dir: Path, name: str, reap: bool = False) -> dict[str, Any]:
    """Continue a stopped, crashed or failed sweep: live trials are followed again, dead ones resumed."""
    folder = SweepFolder(runs_dir, name)
    try:
        with held_briefly(folder.start_lock, what=f"sweep {name}"):
            state = read_state(folder)
            if state is None:
                raise SweepError(f"no sweep {name!r} in {folder.runs_dir}; known: {', '.join(sweep_names(runs_dir)) or 'none'}")
            if state["state"] in SWEEP_ACTIVE:
                raise SweepError(f"sweep {name} is {state['state']} (its runner lives); nothing to resume")
            if state["state"] == "finished":
                raise SweepError(f"sweep {name} is finished; raise n_trials in a new sweep file to search further")
            stored = load_state(folder) or state
            folder.stop_request.unlink(missing_ok=True)
            stored.update(state="running", launched_at=time.time(), runner=None, ended_at=None, error=None)
            write_state(folder, stored)
            launch_runner(folder, reap=reap)
    except LockBusy as exc:
        raise SweepError(str(exc)) from None
    return stored


def stop_sweep(runs_dir: Path, name: str) -> dict[str, Any]:
    """Ask the runner to stop: no more trials, running ones stop gracefully and resume with the sweep."""
    folder = SweepFolder(runs_dir, name)
    state = read_state(folder)
    if state is None:
        raise SweepError(f"no sweep {name!r} in {folder.runs_dir}")
    if state["state"] not in SWEEP_ACTIVE and state["state"] != "crashed":
        raise SweepError(f"sweep {name} is {state['state']}; nothing to stop")
    folder.stop_request.write_text(f"stop asked at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    if state["state"] == "crashed":  # no runner to tell: stop its live runs here, resumable with the sweep
        _stop_orphan_runs(folder)
        stored = load_state(folder) or state
        stored.update(state="stopped", ended_at=time.time())
        write_state(folder, stored)
        return stored
    return state


def _stop_orphan_runs(folder: SweepFolder) -> None:
    """Ask the live runs of a sweep whose runner is gone to stop; they resume with ``sweep resume``."""
    import optuna
    from optuna.trial import TrialState

    spec = read_spec(folder)
    study = load_study(spec, folder)
    if study is None:
        return
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        run_id = trial.user_attrs.get("run_id")
        if run_id and read_status(folder.runs_dir / run_id).state in LIVE:
            optuna.Trial(study, trial._trial_id).set_user_attr("stopped_by_sweep", True)
            request_stop(folder.runs_dir / run_id, f"the sweep {spec.name} was stopped")


def read_spec(folder: SweepFolder) -> SweepSpec:
    """The sweep as it was started."""
    if not folder.spec.is_file():
        raise SweepError(f"no sweep {folder.name!r} in {folder.runs_dir}; known: "
                         f"{', '.join(sweep_names(folder.runs_dir)) or 'none'}")
    try:
        return parse_sweep(read_yaml_mapping(folder.spec), str(folder.spec))
    except (ConfigError, ValueError) as exc:
        raise ConfigError([FieldIssue("sweep", str(exc))], str(folder.spec)) from None


def launch_runner(folder: SweepFolder, reap: bool = True) -> subprocess.Popen[bytes]:
    return folder.launch_runner(RUNNER_MODULE, str(folder.runs_dir), folder.name, reap=reap)


def sweep_status(runs_dir: Path, name: str, importances: bool = False) -> dict[str, Any]:
    """``{name, storage, study_name, state, best: {value, params, run_id}, trials: [...]}``, and with
    ``importances`` Optuna's parameter importances (seconds on a big study: the window asks off its GUI thread)."""
    folder = SweepFolder(runs_dir, name)
    spec = read_spec(folder)
    state = read_state(folder) or {"state": "not started"}
    study = load_study(spec, folder)
    scales = {env: EnvScale.from_json(v) for env, v in (state.get("scales") or {}).items()}
    trials = [trial_row(spec, t, scales) for t in study.get_trials(deepcopy=False)] if study else []
    return {"name": spec.name, "storage": storage_url(spec, folder), "study_name": spec.study_name(),
            "state": state["state"], "n_trials": spec.n_trials, "parallel": spec.parallel,
            "direction": spec.objective.direction, "metric": spec.objective.metric,
            "seeds": spec.seed_list() or [], "runs_per_trial": spec.group_size(), "aggregate": spec.aggregate,
            "envs": [e.id for e in spec.envs], "normalisation": {env: s.text for env, s in scales.items()},
            "best": best_row(spec, trials), "trials": trials, "error": state.get("error"),
            "runner_log": str(folder.runner_log), "ray": state.get("ray"), "space": {p: d.kind for p, d in spec.space.items()},
            **({"importances": param_importances(study) if study else {}} if importances else {})}


DONE_TRIALS = ("complete", "pruned", "fail")


def sweeps_since(runs_dir: Path, since: float) -> list[dict[str, Any]]:
    """The sweeps that ran at some time since ``since`` (launched before now and not ended before it), each as the
    morning report lists it: ``{name, state, trials_done, n_trials, best_value, metric, direction, best_run}``.
    A sweep whose files cannot be read is listed with its state and the error as its state's reason."""
    out: list[dict[str, Any]] = []
    for name in sweep_names(runs_dir):
        state = read_state(SweepFolder(runs_dir, name))
        if not state or float(state.get("launched_at") or state.get("created_at") or 0) <= 0:
            continue
        ended = state.get("ended_at")
        if isinstance(ended, int | float) and ended < since:
            continue
        try:
            sweep_now = sweep_status(runs_dir, name)
        except (ConfigError, SweepError, OSError, ValueError) as exc:  # a damaged sweep is listed, not a failed report
            out.append({"name": name, "state": f"{state.get('state')}: {exc}", "trials_done": None, "n_trials": None,
                        "best_value": None, "metric": "", "direction": "", "best_run": None})
            continue
        if state["state"] == "crashed" and not _trial_ran_since(runs_dir, sweep_now["trials"], since):
            continue  # its runner is gone with no end written: it ran tonight only if one of its trials did
        best = sweep_now.get("best") or {}
        out.append({"name": name, "state": sweep_now["state"], "n_trials": sweep_now["n_trials"],
                    "trials_done": sum(1 for t in sweep_now["trials"] if t["state"] in DONE_TRIALS),
                    "best_value": best.get("value"), "metric": sweep_now["metric"], "direction": sweep_now["direction"],
                    "best_run": best.get("run_id")})
    return out


def _trial_ran_since(runs_dir: Path, trials: list[dict[str, Any]], since: float) -> bool:
    for trial in trials:
        if trial.get("run_id"):
            status = read_status(Path(runs_dir) / str(trial["run_id"]))
            times = [status.started_at, status.ended_at, status.updated_at]
            if any(isinstance(t, int | float) and t >= since for t in times):
                return True
    return False
