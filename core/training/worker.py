"""The worker process: ``python -m core.training.worker RUN_DIR [--resume]``.

It owns the run folder while it lives (``worker.lock``), keeps ``status.json`` through the
states starting -> running -> (finished | stopped | failed), and turns any exception into state
``failed`` with the message and the traceback's tail. Thread environment variables are set
here, before torch is imported, so subprocess envs do not start a thread storm.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

from core.run.layout import RunDir
from core.run.lock import RunLock
from core.run.status import read_status, write_status
from core.run.store import load_run_config
from core.util.procs import process_identity


def set_thread_env(torch_threads: int | None, subproc: bool) -> None:
    """OMP/MKL thread counts for this process and the env processes it starts."""
    if torch_threads:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(torch_threads)
    elif subproc:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        os.environ.setdefault("MKL_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.training.worker")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    args = parser.parse_args(argv)
    run_dir = args.run_dir.resolve()
    lock = RunLock(run_dir)
    try:
        lock.acquire()
    except RuntimeError as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    previous = read_status(run_dir)
    attempt = int(previous.get("attempt", 0)) + 1
    RunDir(run_dir).stop_request.unlink(missing_ok=True)  # a STOP left from an earlier stop must not end this attempt
    write_status(run_dir, state="starting", **process_identity(), attempt=attempt, error=None, exit_reason=None,
                 ended_at=None, started_at=previous.get("started_at") or time.time(),
                 resumed_from=previous.get("resumed_from") if not args.resume else previous.get("state"))
    print(f"worker: pid {os.getpid()} attempt {attempt} {'resuming' if args.resume else 'starting'} {run_dir.name}", flush=True)
    try:
        cfg = load_run_config(run_dir)
        set_thread_env(cfg.runtime.torch_threads, cfg.runtime.vec_env == "subproc")
        from core.training.session import TrainingSession  # torch loads here, after the env vars

        state, reason = TrainingSession(run_dir, cfg, resume=args.resume).run()
        write_status(run_dir, state=state, exit_reason=reason, ended_at=time.time())
        print(f"worker: {state}: {reason}", flush=True)
        return 0
    except BaseException as exc:  # noqa: BLE001 - every failure must reach status.json
        tb = traceback.format_exc()
        print(tb, file=sys.stderr, flush=True)
        message = f"{type(exc).__name__}: {exc}".strip()
        write_status(run_dir, state="failed", ended_at=time.time(), exit_reason=message,
                     error={"message": message, "traceback": "\n".join(tb.strip().splitlines()[-15:])})
        return 1
    finally:
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
