"""One attempt at training a run: build or restore, apply runtime flags, learn, checkpoint, summarise."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch as th
from stable_baselines3.common.callbacks import CallbackList, EvalCallback
from stable_baselines3.common.logger import CSVOutputFormat, JSONOutputFormat, Logger, TensorBoardOutputFormat
from stable_baselines3.common.vec_env import VecNormalize

from core.config.errors import ConfigError, FieldIssue
from core.config.schema import RunConfig
from core.config.spaces import check_spaces, space_kind
from core.runs import latest_checkpoint, write_status
from core.summary import summarize
from core.telemetry.recorder import TelemetryRecorder
from core.training.callbacks import CheckpointEvery, EvalRecorder, MetricsWriter, RunRecorder, StopFlag
from core.training.checkpoints import Checkpointer
from core.training.factory import build_model, build_vec_env, load_model, resolve_device, wrap_normalize
from core.util.files import read_json, write_atomic, write_json_atomic
from core.util.jsonl import JsonlWriter, read_jsonl, repair_torn_tail


def apply_runtime_flags(cfg: RunConfig) -> list[str]:
    """TF32, cuDNN benchmark and torch threads; returns notes for the event log."""
    rt = cfg.runtime
    notes = []
    if rt.torch_threads:
        th.set_num_threads(rt.torch_threads)
    th.backends.cuda.matmul.allow_tf32 = rt.tf32
    th.backends.cudnn.allow_tf32 = rt.tf32
    th.backends.cudnn.benchmark = rt.cudnn_benchmark
    device = resolve_device(rt.device)
    if device.startswith("cuda") and not th.cuda.is_available():
        raise ConfigError([FieldIssue("runtime.device", f"{rt.device} was asked for but torch {th.__version__} sees no CUDA device: use cpu or auto, or install a CUDA build of torch")])
    notes.append(f"device {device}, torch {th.__version__}, {th.get_num_threads()} threads, TF32 {'on' if rt.tf32 else 'off'}")
    return notes


def supersede_after(run_dir: Path, step: int) -> int:
    """Move records past the checkpoint's step (from a crashed attempt) aside, keeping them.

    The resumed attempt re-trains from ``step``; its curve continues without overlap, and the
    crashed attempt's later records stay readable in ``metrics.superseded.jsonl``.
    """

    path = run_dir / "metrics.jsonl"
    repair_torn_tail(path)
    records = read_jsonl(path)
    keep: list[dict] = []
    moved: list[dict] = []
    for rec in records:  # events without a step are messages: kept
        (keep if int(rec.get("step", 0)) <= step else moved).append(rec)
    if moved:
        with open(run_dir / "metrics.superseded.jsonl", "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in moved))
        write_atomic(path, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in keep))
    return len(moved)


class TrainingSession:
    def __init__(self, run_dir: Path, cfg: RunConfig, resume: bool = False):
        self.run_dir = Path(run_dir)
        self.cfg = cfg
        self.resume = resume

    def _event(self, out: JsonlWriter, message: str, level: str = "info") -> None:
        out.write([{"kind": "event", "t": time.time(), "level": level, "message": message}])
        print(f"worker: {level}: {message}", flush=True)

    def run(self) -> tuple[str, str]:
        cfg, run_dir = self.cfg, self.run_dir
        if cfg.is_baseline:  # nothing to restore: a resumed baseline plays its episodes again
            from core.training.baseline import run_baseline

            out = JsonlWriter(run_dir / "metrics.jsonl")
            return run_baseline(run_dir, cfg, out, self.resume)
        ckpt = latest_checkpoint(run_dir) if self.resume else None
        if self.resume and ckpt is None:
            raise RuntimeError("no checkpoint to resume from (checkpoints/latest.json is missing); start a new run")
        moved = supersede_after(run_dir, ckpt["step"]) if ckpt else 0
        out = JsonlWriter(run_dir / "metrics.jsonl")
        status = read_json(run_dir / "status.json", default={}) or {}
        for warning in status.get("warnings") or []:
            self._event(out, warning, "warning")
        if moved:
            self._event(out, f"{moved} records after step {ckpt['step']:,} from the interrupted attempt moved to metrics.superseded.jsonl", "warning")
        for note in apply_runtime_flags(cfg):
            self._event(out, note)

        env, notes = build_vec_env(cfg, monitor_dir=run_dir / "monitor", append_monitor=self.resume)
        for note in notes:
            self._event(out, note, "warning")
        issues = check_spaces(cfg, space_kind(env.action_space))
        if issues:
            env.close()
            raise ConfigError(issues)
        folder = run_dir / "checkpoints"
        if ckpt and ckpt.get("vecnormalize"):
            env = VecNormalize.load(str(folder / ckpt["vecnormalize"]), env)
        else:
            env = wrap_normalize(cfg, env)
        if ckpt:
            model = load_model(cfg, folder / ckpt["model"], env, cfg.runtime.device)
            if ckpt.get("replay_buffer"):
                model.load_replay_buffer(str(folder / ckpt["replay_buffer"]))
            self._event(out, f"resumed from the checkpoint at step {ckpt['step']:,}"
                        + (f" with {model.replay_buffer.size():,} transitions in the replay buffer" if ckpt.get("replay_buffer") else ""))
        else:
            model = build_model(cfg, env, cfg.runtime.device)
        model.set_logger(self._logger(out, attempt=int(status.get("attempt", 1))))

        stop = StopFlag(run_dir)
        stop.install_signal_handler()
        total = cfg.budget.total_timesteps
        checkpointer = Checkpointer(run_dir, cfg.budget.keep_checkpoints, out)
        recorder = RunRecorder(out, stop, total)
        callbacks = [recorder]
        if cfg.budget.checkpoint_every:
            callbacks.append(CheckpointEvery(checkpointer, cfg.budget.checkpoint_every))
        eval_env = None
        if cfg.budget.eval_every:
            eval_env, _ = build_vec_env(cfg, n_envs=1, seed_offset=10_000, force_dummy=True)
            eval_env = wrap_normalize(cfg, eval_env, training=False)
            callbacks.append(EvalCallback(eval_env, n_eval_episodes=cfg.budget.eval_episodes,
                                          eval_freq=max(cfg.budget.eval_every // cfg.runtime.n_envs, 1),
                                          log_path=str(run_dir / "eval"), deterministic=True, verbose=0,
                                          callback_after_eval=EvalRecorder(out)))

        telemetry = self._start_telemetry(out)
        write_status(run_dir, state="running")
        started = time.monotonic()
        prior_time = float(status.get("train_time_s") or 0.0)
        try:
            remaining = total - model.num_timesteps
            if remaining > 0:
                # log_interval counts rollouts (on-policy) or episodes (off-policy): dump each one, so
                # a SAC run with 1000-step episodes shows its losses every episode, not every fourth
                model.learn(total_timesteps=remaining, callback=CallbackList(callbacks), log_interval=1,
                            reset_num_timesteps=not self.resume, progress_bar=False)
            if recorder.stopped:
                write_status(run_dir, state="stopping")
            checkpointer.save(model)
        finally:
            write_status(run_dir, train_time_s=prior_time + time.monotonic() - started)
            if telemetry is not None:
                telemetry.stop()
            env.close()
            if eval_env is not None:
                eval_env.close()
        if recorder.stopped:
            state, reason = "stopped", f"stopped at step {model.num_timesteps:,} ({stop.reason})"
        else:
            state, reason = "finished", f"reached {model.num_timesteps:,} of {total:,} steps"
        self._event(out, reason)
        out.close()
        summary = summarize(run_dir)
        summary.update(exit_reason=reason, state=state)
        write_json_atomic(run_dir / "summary.json", summary)
        return state, reason

    def _logger(self, out: JsonlWriter, attempt: int) -> Logger:
        """SB3's logger writing csv/json (one file per attempt), TensorBoard and train records."""
        sb3 = self.run_dir / "sb3"
        sb3.mkdir(exist_ok=True)
        suffix = "" if attempt <= 1 else f"-attempt{attempt}"
        formats = [CSVOutputFormat(str(sb3 / f"progress{suffix}.csv")), JSONOutputFormat(str(sb3 / f"progress{suffix}.json")),
                   TensorBoardOutputFormat(str(self.run_dir / "tb")), MetricsWriter(out)]
        return Logger(folder=str(sb3), output_formats=formats)

    def _start_telemetry(self, out: JsonlWriter):
        hz = self.cfg.runtime.telemetry_hz
        if not hz:
            return None
        torch_memory = (lambda: th.cuda.memory_reserved()) if th.cuda.is_available() else None
        recorder = TelemetryRecorder(self.run_dir / "telemetry.jsonl", hz, root_pid=os.getpid(), torch_memory=torch_memory)
        recorder.start()
        return recorder
