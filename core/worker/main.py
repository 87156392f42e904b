"""The worker process: ``python -m core.worker.main RUN_DIR [--resume]``.

It owns the run folder while it lives (``worker.lock``), keeps ``status.json`` through the
states starting -> running -> (finished | stopped | failed), and turns any exception into state
``failed`` with the message and the traceback's tail. Thread environment variables are set
here, before torch is imported, so subprocess envs do not start a thread storm; so are JAX's for an SBX run.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import time
import traceback
from pathlib import Path

from core.estimate.xla import set_jax_env
from core.launch.supervisor import SUPERVISED_ENV
from core.notify.events import RUN_ENDS
from core.notify.run_events import notify_run_event
from core.run.layout import RunDir
from core.run.lock import RunLock
from core.run.status import read_status, write_status
from core.run.store import load_run_config
from core.util.files import describe_os_error
from core.util.power_throttling import opt_out
from core.util.procs import process_identity
from core.util.threads import resolved_torch_threads
from core.worker import gpu_reset


def set_thread_env(torch_threads: int | None, subproc: bool) -> None:
    """OMP/MKL thread counts for this process and the env processes it starts (the worker passes the resolved
    count: ``core.util.threads``)."""
    if torch_threads:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(torch_threads)
    elif subproc:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        os.environ.setdefault("MKL_NUM_THREADS", "1")


RESERVE_BYTES = 1 << 20  # kept on disk while the worker runs; freed on a full disk for its last status write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.worker.main")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    args = parser.parse_args(argv)
    run_dir = args.run_dir.resolve()
    layout = RunDir(run_dir)
    # Until training installs its own handler, SIGTERM asks for a graceful stop the way STOP does:
    # the attempt stops at its first check (with a checkpoint) instead of dying in "starting".
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, lambda *_: layout.stop_request.write_text("SIGTERM while starting\n"))
    lock = RunLock(run_dir)
    try:
        lock.acquire()
    except RuntimeError as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    previous = read_status(run_dir)
    attempt = (previous.attempt or 0) + 1
    write_status(run_dir, state="starting", **process_identity(), attempt=attempt, error=None, exit_reason=None,
                 ended_at=None, started_at=previous.started_at or time.time(), notes=None, stalled=None,
                 failure_kind=None,
                 resumed_from=previous.resumed_from if not args.resume or previous.state == "starting"
                 else previous.state)  # launched by core.launch.control, which recorded it before "starting"
    reserve_space(layout.space_reserve)
    print(f"worker: pid {os.getpid()} attempt {attempt} {'resuming' if args.resume else 'starting'} {run_dir.name}", flush=True)
    stay_unthrottled()
    try:
        cfg = load_run_config(run_dir)
        rt = cfg.runtime
        subproc = rt.vec_env != "dummy"
        set_thread_env(resolved_torch_threads(rt.torch_threads, rt.n_envs, subproc, rt.device), subproc)
        if rt.engine == "sbx":
            set_jax_env(rt.device, sys.platform)
        from core.worker.session import TrainingSession  # torch loads here, after the env vars

        state, reason = TrainingSession(run_dir, cfg, resume=args.resume).run()
        error = {"message": reason} if state == "failed" else None
        # a training that ends "failed" by itself failed its health check: a NaN or inf that would come again
        write_status(run_dir, state=state, exit_reason=reason, ended_at=time.time(), error=error, stalled=None,
                     failure_kind="diverged" if state == "failed" else None)
        print(f"worker: {state}: {reason}", flush=True)
        _notify_unsupervised(run_dir, state, reason)
        return 0
    except BaseException as exc:  # noqa: BLE001 - every failure must reach status.json
        layout.space_reserve.unlink(missing_ok=True)  # on a full disk, this makes room for the status below
        tb = traceback.format_exc()
        print(tb, file=sys.stderr, flush=True)
        kind, message = failure(exc)
        write_status(run_dir, state="failed", ended_at=time.time(), exit_reason=message, stalled=None,
                     failure_kind=kind,
                     error={"message": message, "traceback": "\n".join(tb.strip().splitlines()[-15:])})
        _notify_unsupervised(run_dir, "failed", message)
        return 1
    finally:
        layout.space_reserve.unlink(missing_ok=True)
        layout.stop_request.unlink(missing_ok=True)  # answered: the attempt has ended
        lock.release()


def stay_unthrottled() -> None:
    """Out of Windows' power throttling (``core.util.power_throttling``), said in worker.log: a failure on stderr."""
    note = opt_out()
    if note:
        print(f"worker: {note}", file=sys.stderr if note.startswith("could not") else sys.stdout, flush=True)


def _notify_unsupervised(run_dir: Path, state: str, reason: str) -> None:
    """A worker started without its supervisor (``python -m core.worker.main`` by hand) sends
    its end's notification itself; under a supervisor, the supervisor sends it once this process is gone."""
    if not os.environ.get(SUPERVISED_ENV) and state in RUN_ENDS:
        notify_run_event(run_dir, state, reason)


def reserve_space(path: Path, size: int = RESERVE_BYTES) -> None:
    """Hold ``size`` bytes of the run's disk (best effort: an already full disk gets no reserve)."""
    try:
        with open(path, "wb") as fh:
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError:
        path.unlink(missing_ok=True)


def failure(exc: BaseException) -> tuple[str, str]:
    """``(kind, reason)`` of the exception that ended the attempt: its kind (``core.launch.auto_resume.KINDS``: whether
    resuming could help) and what ended it, in words a user can act on (a full disk, no memory, a GPU driver reset,
    or the error)."""
    name = type(exc).__name__
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        # a CheckpointError's strerror is already the whole sentence (str() would prefix "[Errno 28]")
        text = str(exc.strerror) if name == "CheckpointError" else describe_os_error(exc)
        return "disk_full", f"{text}; the run resumes from its last checkpoint once there is space"
    if isinstance(exc, MemoryError):
        return "host_oom", ("out of memory (host RAM): lower the replay buffer (buffer_size), n_envs or the batch size, "
                            "or close other programs; the run resumes from its last checkpoint")
    # torch.cuda.OutOfMemoryError; an SBX run's JAX says RESOURCE_EXHAUSTED in its runtime error
    jax_oom = name in ("XlaRuntimeError", "JaxRuntimeError") and str(exc).lstrip().startswith("RESOURCE_EXHAUSTED")
    if name == "OutOfMemoryError" or jax_oom:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return "gpu_oom", (f"out of GPU memory: {first[:200]}; lower the batch size or the network (rlpanel estimate "
                           "shows what fits)")
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", "interrupted (Ctrl-C in the worker's console)"
    text = str(exc)
    env_error = name in ("EnvProcessError", "EnvsAborted")  # lean_vec_env's (not imported: SB3)
    reset = gpu_reset.reset_line(text)  # an env's error holds the env process's traceback: the reset may be on any line
    if reset is not None:
        return gpu_reset.KIND, gpu_reset.reset_reason(reset, text if env_error else None)
    if env_error:  # the traceback has its own field
        return "env", f"{name}: {text.strip().splitlines()[0]}"
    reason = f"{name}: {exc}".strip()
    if name == "ConfigError":
        return "config", reason
    if "no complete checkpoint to resume from" in text:
        return "no_checkpoint", reason
    if "CUDA error" in text or "CUDA driver" in text or name in ("AcceleratorError", "CudaError"):
        return "cuda", reason  # an ECC error, a lost device: the next attempt may run
    return "error", reason


def failure_reason(exc: BaseException) -> str:
    """What ended the attempt, in a user's words (``failure``'s reason)."""
    return failure(exc)[1]


if __name__ == "__main__":
    sys.exit(main())
