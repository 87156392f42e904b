"""One attempt at training a run: build or restore, apply runtime flags, learn, checkpoint, summarise."""

from __future__ import annotations

import json
import random
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import torch as th
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, EvalCallback
from stable_baselines3.common.logger import CSVOutputFormat, JSONOutputFormat, Logger, TensorBoardOutputFormat
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, check_spaces, describe, space_kind
from core.config.steps import planned_steps
from core.estimate.device import worker_threads
from core.run import records
from core.run.checkpoints import Checkpoint, CheckpointChoice, find_checkpoint
from core.run.layout import RunDir
from core.run.records import well_formed
from core.run.status import RunStatus, read_recorded_status, write_status
from core.run.summary import summarize
from core.run.time_split import TimeSplit
from core.telemetry.devices import GpuMatch
from core.util.files import write_atomic, write_json_atomic
from core.util.jsonl import JsonlWriter, read_jsonl, repair_torn_tail
from core.util.text import format_number
from core.worker.best import KeepBest
from core.worker.callbacks import (
    CheckpointEvery,
    MetricsWriter,
    RunRecorder,
    StopFlag,
    TrainingHalted,
    logger_formats,
    numbers,
)
from core.worker.checkpoints import Checkpointer
from core.worker.cycle_clock import CycleClock, keep_in_status, timed_evaluation
from core.worker.devices import run_gpu
from core.worker.factory import (
    WorkerDevice,
    build_model,
    build_vec_env,
    eval_callback_class,
    load_model,
    placement_note,
    worker_device,
    wrap_normalize,
)
from core.worker.fit_record import record_estimate
from core.worker.health import TrainingHealth
from core.worker.lean_vec_env import EnvProcessError
from core.worker.restart_log import EnvRestartLog
from core.worker.services import AttemptTimes, Worker, start_services
from core.worker.stop_rules import RuleStop, after_evaluation, start_from_best

EVAL_SEED_OFFSET = 10_000  # the eval env's seed: the run's + this, apart from training's (load_policy's: + 20,000)


def apply_runtime_flags(cfg: RunConfig, device: WorkerDevice) -> list[str]:
    """TF32, cuDNN benchmark and torch threads for a run on ``device``; returns notes for the event log (an SBX run's:
    JAX's device)."""
    rt = cfg.runtime
    th.set_num_threads(worker_threads(cfg, device.train).count)  # the threads the estimate said, for its device
    auto = "" if rt.torch_threads else " (auto)"
    if rt.engine == "sbx":  # torch holds SBX's buffers only, on the CPU: TF32 and cuDNN are not used
        from core.worker.sbx_engine import versions_note  # SBX_IMPORTS (core.worker.factory)

        return [f"device {device.train}, engine sbx: {versions_note()}; torch {th.__version__} for the buffers, "
                f"{th.get_num_threads()} threads{auto}"]
    th.backends.cuda.matmul.allow_tf32 = rt.tf32
    th.backends.cudnn.allow_tf32 = rt.tf32
    th.backends.cudnn.benchmark = rt.cudnn_benchmark
    note = f"device {device.train}, torch {th.__version__}, {th.get_num_threads()} threads{auto}"
    if device.train.startswith("cuda"):  # TF32 is a CUDA matmul mode: on a CPU run it would name something not there
        note += f", TF32 {'on' if rt.tf32 else 'off'}"
    return [note]


def supersede_after(run_dir: Path, step: int) -> int:
    """Move records past the checkpoint's step (from a crashed attempt) aside, keeping them.

    The resumed attempt re-trains from ``step``; its curve continues without overlap, and the
    crashed attempt's later records stay readable in ``metrics.superseded.jsonl`` (so do records
    of the wrong shape, which no reader would use).
    """
    layout = RunDir(run_dir)
    repair_torn_tail(layout.metrics)
    keep: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for rec in read_jsonl(layout.metrics):  # events without a step are messages: kept
        (keep if well_formed(rec) and int(rec.get("step", 0)) <= step else moved).append(rec)
    if moved:
        with open(layout.superseded, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in moved))
        write_atomic(layout.metrics, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in keep))
    return len(moved)


class TrainingSession:
    """One attempt: ``run()`` trains until the budget or a stop and returns ``(state, reason)``."""

    def __init__(self, run_dir: Path, cfg: RunConfig, resume: bool = False):
        self.run_dir = Path(run_dir)
        self.layout = RunDir(run_dir)
        self.cfg = cfg
        self.resume = resume
        self._spaces: EnvSpaces | None = None  # the env's, once built: the estimate kept with the run
        self.plan = WorkerDevice("cpu", "cpu")  # where it trains: decided once, before the flags are applied
        self.device = "cpu"  # the device it trains on (torch's, or JAX's for an SBX run): plan.train

    def _event(self, out: JsonlWriter, message: str, level: str = "info") -> None:
        out.write([records.event(message, level)])
        print(records.event_echo(level, message), flush=True)

    def run(self) -> tuple[str, str]:
        status = read_recorded_status(self.run_dir)
        attempt = status.attempt or 1
        if self.cfg.is_baseline:  # nothing to restore: a resumed baseline plays its episodes again
            from core.worker.baseline import run_baseline

            out = JsonlWriter(self.layout.metrics)
            out.write([records.attempt(attempt, 0)])
            return run_baseline(self.run_dir, self.cfg, out, self.resume)
        choice = find_checkpoint(self.run_dir) if self.resume else CheckpointChoice(None)
        ckpt = choice.checkpoint
        if self.resume and ckpt is None:
            why = f" ({choice.note})" if choice.skipped else " (checkpoints/latest.json is missing)"
            raise RuntimeError(f"no complete checkpoint to resume from{why}; start a new run")
        moved = supersede_after(self.run_dir, ckpt.step) if ckpt else 0
        out = JsonlWriter(self.layout.metrics)
        out.write([records.attempt(attempt, ckpt.step if ckpt else 0)])
        if choice.skipped:
            self._event(out, f"resuming from an older checkpoint: {choice.note}", "warning")
        self._announce(out, status, ckpt, moved)
        restarts = EnvRestartLog(self.run_dir, out, count=status.env_restarts or 0)
        env = self._env(out, ckpt, restarts)
        model = self._model(out, env, ckpt)
        restarts.step = lambda: model.num_timesteps
        health = TrainingHealth(out, space_kind(env.action_space) in ("discrete", "multidiscrete", "multibinary"),
                                self.cfg.algo)
        cycles = CycleClock(out)
        model.set_logger(self._logger(out, attempt, health, cycles))
        state, reason = self._learn(out, model, env, health, cycles, status)
        if health.notes:
            write_status(self.run_dir, notes=health.notes)
        self._event(out, reason)
        out.close()
        summary = summarize(self.run_dir)
        summary.update(exit_reason=reason, state=state)
        write_json_atomic(self.layout.summary, summary)
        return state, reason

    # --- the steps of run() ---------------------------------------------------------------

    def _announce(self, out: JsonlWriter, status: RunStatus, ckpt: Checkpoint | None, moved: int) -> None:
        """The launch warnings, what a resume moved aside, and the runtime flags, as events."""
        for warning in status.warnings:
            self._event(out, warning, "warning")
        if moved and ckpt:
            self._event(out, f"{moved} records after step {ckpt.step:,} from the interrupted attempt moved to "
                             f"{self.layout.superseded.name}", "warning")
        # the device the worker trains on, decided once: the Monitor's title shows it
        self.plan = worker_device(self.cfg)
        self.device = self.plan.train
        for note in apply_runtime_flags(self.cfg, self.plan):
            self._event(out, note)
        write_status(self.run_dir, device=self.device)

    def _env(self, out: JsonlWriter, ckpt: Checkpoint | None, restarts: EnvRestartLog) -> VecEnv:
        """The training env, checked against the algorithm, with its VecNormalize statistics restored; the lean
        env processes tell ``restarts`` of each one they replace."""
        env, notes = build_vec_env(self.cfg, monitor_dir=self.layout.monitor, append_monitor=self.resume,
                                   on_replaced=restarts)
        for note in notes:
            self._event(out, note, "warning")
        spaces = replace(describe(env.observation_space, env.action_space), action_masks=env.has_attr("action_masks"))
        issues = check_spaces(self.cfg, space_kind(env.action_space), spaces)
        if issues:
            env.close()
            raise ConfigError(issues)
        self._spaces = spaces
        stats = ckpt.path(self.run_dir, "vecnormalize") if ckpt else None
        if stats is not None:
            return VecNormalize.load(str(stats), env)
        return wrap_normalize(self.cfg, env)

    def _model(self, out: JsonlWriter, env: VecEnv, ckpt: Checkpoint | None) -> BaseAlgorithm:
        """A new model, or the checkpoint's (with its replay buffer)."""
        model = self._placed(out, build_model(self.cfg, env, self.plan.torch) if not ckpt else
                             load_model(self.cfg, self.layout.checkpoints / ckpt.files["model"], env, self.plan.torch))
        if not ckpt:
            return model
        buffer = ""
        replay = ckpt.path(self.run_dir, "replay_buffer")
        if replay is not None and isinstance(model, OffPolicyAlgorithm):
            model.load_replay_buffer(str(replay))
            if model.replay_buffer is not None:
                buffer = f" with {model.replay_buffer.size():,} transitions in the replay buffer"
        self._event(out, f"resumed from the checkpoint at step {ckpt.step:,}{buffer}")
        return model

    def _placed(self, out: JsonlWriter, model: BaseAlgorithm) -> BaseAlgorithm:
        """The model, checked against the device plan: where torch put it elsewhere, a warning says so."""
        note = placement_note(self.plan, model)
        if note:
            self._event(out, note, "warning")
        return model

    def _callbacks(self, out: JsonlWriter, recorder: RunRecorder, checkpointer: Checkpointer,
                   rules: RuleStop) -> tuple[list[BaseCallback], VecEnv | None]:
        """The run's callbacks (records, checkpoints, evaluation with the best checkpoint and the stopping rules)
        and the eval env to close after."""
        budget = self.cfg.budget
        callbacks: list[BaseCallback] = [recorder]
        if budget.checkpoint_every or budget.checkpoint_minutes:
            callbacks.append(CheckpointEvery(checkpointer, budget.checkpoint_every, budget.checkpoint_minutes))
        if not budget.eval_every:
            return callbacks, None
        seed = self.cfg.runtime.seed
        # every evaluation plays the episodes of this seed (EvalRecorder seeds again after each); best.json keeps it
        eval_seed = seed + EVAL_SEED_OFFSET if seed is not None else random.randrange(2**31)
        eval_env, _ = build_vec_env(self.cfg, n_envs=1, seed_offset=EVAL_SEED_OFFSET, force_dummy=True)
        eval_env.seed(eval_seed)
        eval_env = wrap_normalize(self.cfg, eval_env, training=False)
        keeper = KeepBest(self.run_dir, checkpointer, out, eval_seed, budget.eval_episodes)
        if keeper.step is not None:
            self._event(out, f"the best evaluation so far: mean {format_number(keeper.mean_reward)} at step {keeper.step:,} "
                             "(checkpoints/best.json); a new best must beat it")
        evaluation = eval_callback_class(self.cfg)(eval_env, n_eval_episodes=budget.eval_episodes,
                                                   eval_freq=max(budget.eval_every // self.cfg.runtime.n_envs, 1),
                                                   log_path=str(self.layout.evaluations), deterministic=True, verbose=0,
                                                   callback_after_eval=after_evaluation(budget, out, keeper, rules))
        start_from_best(evaluation, keeper)
        callbacks.append(evaluation)
        return callbacks, eval_env

    def _run_gpu(self, model: BaseAlgorithm) -> GpuMatch | None:
        """NVML's index of the run's GPU; on CUDA, the estimate for that card is kept with the run (an SBX run's from
        its own model, measured as the estimate measures it: ``core.worker.sbx_measure``)."""
        device = self.device
        sbx = self.cfg.runtime.engine == "sbx"
        where = run_gpu(device, ask_torch=not sbx)
        if device.startswith("cuda") and where is not None and self._spaces is not None:
            if sbx:
                from core.worker.sbx_measure import remember_model  # SBX_IMPORTS (core.worker.factory)

                remember_model(self.cfg, model, device)
            record_estimate(self.run_dir, self.cfg, self._spaces, where.gpu)
        return where

    def _checkpointer(self, out: JsonlWriter, recorder: RunRecorder, health: TrainingHealth,
                      cycles: CycleClock) -> Checkpointer:
        """The run's checkpointer: the records a checkpoint covers are on disk before it, its saves are timed aside
        and refused after a divergence."""

        def flush_records() -> None:
            self._metrics_writer.flush()
            recorder.flush()
            out.sync()

        checkpointer = Checkpointer(self.run_dir, self.cfg.budget.keep_checkpoints, out, before_save=flush_records,
                                    allowed=lambda: health.failure, timed=cycles.timed_aside)
        if checkpointer.removed_temps:
            self._event(out, f"removed {checkpointer.removed_temps} unfinished checkpoint file(s) an earlier attempt left")
        return checkpointer

    def _learn(self, out: JsonlWriter, model: BaseAlgorithm, env: VecEnv, health: TrainingHealth, cycles: CycleClock,
               prior: RunStatus) -> tuple[str, str]:
        """Train to the budget, a stop or a divergence, checkpoint (not after a divergence), and say how it ended."""
        stop = StopFlag(self.run_dir)
        stop.install_signal_handler()
        total = self.cfg.budget.total_timesteps
        plan = planned_steps(self.cfg, start=model.num_timesteps)
        assert plan is not None, "a baseline plays episodes (core.worker.baseline)"
        # the steps SB3 will really run (whole rollouts, from the checkpoint's step): what progress counts towards
        write_status(self.run_dir, planned_timesteps=plan.steps)
        recorder = RunRecorder(out, stop, plan.steps, health=health, info_keys=tuple(self.cfg.env.info_keys))
        recorder.cycles = cycles
        keep_in_status(cycles, self.run_dir, TimeSplit.from_json(prior.time_split))
        checkpointer = self._checkpointer(out, recorder, health, cycles)
        rules = RuleStop(recorder, total)
        times = AttemptTimes(self.run_dir, prior, cycles)
        with ExitStack() as services:
            services.callback(env.close)
            callbacks, eval_env = self._callbacks(out, recorder, checkpointer, rules)
            if eval_env is not None:
                services.callback(eval_env.close)
            for callback in callbacks:  # the heavy work inside a cycle is timed aside (each is rare): the split's "other"
                if isinstance(callback, EvalCallback):
                    timed_evaluation(callback, cycles)
            worker = Worker(self.run_dir, self.cfg, self.device, out, model, env, recorder, partial(self._event, out))
            start_services(services, worker, self._run_gpu(model), times)
            write_status(self.run_dir, state="running")
            times.start()
            cycles.training_start()  # the split covers the time counted as training: learn()'s set-up and last checkpoint too
            services.callback(lambda: cycles.training_end(model.num_timesteps))
            self._train(model, callbacks, health, total - model.num_timesteps, recorder)
            self._metrics_writer.flush()
            if health.failure:
                recorder.flush(last=True)
                return "failed", health.failure
            # a stop that came once the budget was met (in the last rollout, past the total) ends a finished run
            stopped = recorder.stopped and model.num_timesteps < total
            if stopped:
                write_status(self.run_dir, state="stopping")
            if rules.reason:  # the steps trained are the plan now: the Runs tab and the Monitor read it full
                write_status(self.run_dir, planned_timesteps=model.num_timesteps)
            checkpointer.save(model)
        if stopped:
            return "stopped", f"stopped at step {model.num_timesteps:,} ({stop.reason})"
        if rules.reason:
            return "finished", f"stopped by rule: {rules.reason}"
        return "finished", plan.reached(model.num_timesteps)

    def _train(self, model: BaseAlgorithm, callbacks: list[BaseCallback], health: TrainingHealth, remaining: int,
               recorder: RunRecorder) -> None:
        """SB3's ``learn`` for the ``remaining`` steps; a divergence it raises becomes the health check's failure,
        and the end of the env processes that the watchdog's stop caused (on_stall: stop) is that stop."""
        if remaining <= 0:
            return
        # log_interval counts rollouts (on-policy) or episodes (off-policy): dump each one, so
        # a SAC run with 1000-step episodes shows its losses every episode, not every fourth
        try:
            model.learn(total_timesteps=remaining, callback=CallbackList(callbacks), log_interval=1,
                        reset_num_timesteps=not self.resume, progress_bar=False)
        except TrainingHalted:  # a stop, a failed health check or a stopping rule, in an algorithm that ignores False (ARS)
            pass
        except EnvProcessError:
            if not recorder.stop.check():
                raise
            recorder.stopped = True  # the watchdog ended the env processes to stop a stalled run: stop with a checkpoint
        except (ValueError, RuntimeError) as exc:
            if not health.explain(model.num_timesteps, exc, numbers(model.logger.name_to_value)):
                raise

    def _logger(self, out: JsonlWriter, attempt: int, health: TrainingHealth, cycles: CycleClock) -> Logger:
        """SB3's logger writing csv/json (one file per attempt), TensorBoard and train records; its dumps are timed
        aside on ``cycles``."""
        sb3 = self.layout.sb3_logs
        sb3.mkdir(exist_ok=True)
        self._metrics_writer = MetricsWriter(out, health)
        suffix = "" if attempt <= 1 else f"-attempt{attempt}"
        formats: list[Any] = [CSVOutputFormat(str(sb3 / f"progress{suffix}.csv")),
                              JSONOutputFormat(str(sb3 / f"progress{suffix}.json")),
                              TensorBoardOutputFormat(str(self.layout.tensorboard)), self._metrics_writer]
        return Logger(folder=str(sb3), output_formats=logger_formats(cycles, formats))
