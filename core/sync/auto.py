"""``runtime.sync``: the supervisor's sync, ``python -m core.sync.auto RUN_DIR``, a child the supervisor starts beside
the worker when the run's config names trackers.

It follows the run (``core.sync.sync.follow``) to each tracker named, where the user's ``sync.yaml`` says, every
``FOLLOW_EVERY_S`` and once more when the run ends; the training loop never waits on it. A failed pass is a line in
worker.log (this process's output) and the follow goes on; when the run has ended, the last failure of each tracker
is one warning event in the run's records (``sync_failed``), which the Log tab and ``rlpanel runs`` show, written
under the run's control lock while no worker writes them. A resumed attempt's supervisor starts its own.

This module's top imports are light (the supervisor imports it: no pydantic, no tracker); ``main`` imports the rest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from core.run.layout import RunDir
from core.util.console import utf8_env
from core.util.procs import CREATE_NO_WINDOW
from core.util.yaml_reader import read_yaml_mapping

MODULE = "core.sync.auto"
SYNC_TARGETS = ("mlflow", "wandb")  # RuntimeParams.sync's values (core.config.schema checks them at validation)
WAIT_AT_END_S = 300.0  # the supervisor waits this long for the last sync after the worker ended


def sync_targets(run_dir: Path) -> list[str]:
    """The trackers the run's config.yaml names in ``runtime.sync`` (none when it cannot be read: the worker says why)."""
    try:
        runtime = read_yaml_mapping(RunDir(run_dir).config).get("runtime")
    except ValueError:
        return []
    names = runtime.get("sync") if isinstance(runtime, dict) else None
    return [n for n in SYNC_TARGETS if isinstance(names, list) and n in names]


def start_sync(run_dir: Path, platform: str = sys.platform) -> subprocess.Popen[bytes] | None:
    """The sync child for a run whose config names trackers (its output goes where the caller's goes: worker.log)."""
    if not sync_targets(run_dir):
        return None
    flags = CREATE_NO_WINDOW if platform.startswith("win") else 0
    return subprocess.Popen([sys.executable, "-m", MODULE, str(Path(run_dir).resolve())], stdin=subprocess.DEVNULL,
                            env=utf8_env(os.environ), creationflags=flags)


def _log(line: str) -> None:
    try:
        print(f"sync: {line}", flush=True)
    except OSError:  # a full disk under worker.log
        pass


def record_failures(run_dir: Path, failures: dict[str, str]) -> None:
    """Each tracker's last failure as one warning event, once the run has ended (no worker appends then)."""
    from core.run.records import event
    from core.run.states import TERMINAL
    from core.run.status import read_recorded_status
    from core.util.jsonl import JsonlWriter
    from core.util.locks import LockBusy, held_briefly

    try:
        with held_briefly(RunDir(run_dir).control_lock, what=f"run {Path(run_dir).name}"):
            if read_recorded_status(run_dir).state not in TERMINAL:
                return  # a new attempt writes the records now: worker.log keeps the lines
            writer = JsonlWriter(RunDir(run_dir).metrics)
            try:
                writer.write([event(f"{message}; rlpanel sync {Path(run_dir).name} --to {target} sends it again",
                                    "warning", code="sync_failed") for target, message in failures.items()])
            finally:
                writer.close()
    except (LockBusy, OSError) as exc:
        _log(f"could not record the failed sync in the run's events: {exc}")


def run_sync(run_dir: Path, every_s: float) -> int:
    """Follow the run to each tracker its config names; 1 when a tracker's last pass failed."""
    from core.sync.settings import destination, load_sync_settings
    from core.sync.source import SyncError
    from core.sync.sync import RunSync, SyncResult, follow

    run_dir = Path(run_dir).resolve()
    targets = sync_targets(run_dir)
    failures: dict[str, str] = {}
    try:
        settings = load_sync_settings()
    except SyncError as exc:  # sync.yaml is wrong: nothing can be sent until it is fixed
        _log(str(exc))
        _wait_for_end(run_dir)
        record_failures(run_dir, dict.fromkeys(targets, str(exc)))
        return 1

    def failed(result: SyncResult, exc: SyncError) -> None:
        failures[result.target] = str(exc)
        _log(str(exc))

    def passed(result: SyncResult) -> None:
        failures.pop(result.target, None)  # a later pass went through: nothing to warn of

    syncs = [RunSync(run_dir, destination(t, run_dir.parent, settings)) for t in targets]
    for result in follow(syncs, every_s, on_pass=passed, on_error=failed):
        _log(result.line() if result.passes else f"nothing was sent to {result.target}")
    if failures:
        record_failures(run_dir, failures)
    return 1 if failures else 0


def _wait_for_end(run_dir: Path) -> None:
    from core.run.states import TERMINAL
    from core.run.status import read_status

    while read_status(run_dir).state not in TERMINAL:
        time.sleep(5.0)


def main(argv: list[str] | None = None) -> int:
    from core.sync.sync import FOLLOW_EVERY_S

    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--every", type=float, default=FOLLOW_EVERY_S, help="seconds between syncs while the run trains")
    args = parser.parse_args(argv)
    return run_sync(args.run_dir, args.every)


if __name__ == "__main__":
    sys.exit(main())
