"""One run synced to one destination: a pass sends what the ledger says is new; ``follow`` repeats it until the
run's state is final.

A pass holds the run's sync lock (a user's ``rlpanel sync`` and the supervisor's never send the same records
twice), reads the run, sends the records past the ledger's count, the telemetry past its time, the params once
and the artifacts that are new or changed, then records what was sent. While the run is live a pass sends
``config.yaml`` alone of the artifacts: checkpoints come and go then (a prune), so they go with the pass that
finds the run ended, which also ends the tracker's run with the matching status.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.run.layout import RunDir
from core.run.states import TERMINAL
from core.run.status import read_status
from core.sync.ledger import Sent, read_sent, write_sent
from core.sync.settings import Destination
from core.sync.source import MetricPoint, RunSnapshot, StepClock, SyncError, read_run, record_points, telemetry_points
from core.util.locks import LockBusy, held_briefly

FOLLOW_EVERY_S = 60.0  # a followed run is synced this often (and once more when it ends)
LOCK_WAIT_S = 120.0  # a pass waits this long for another sync of the run to finish
TARGET_NAMES = {"mlflow": "MLflow", "wandb": "W&B"}


class Tracker(Protocol):
    """A tracker's run, open while a run is synced to it (``MlflowRun``, ``WandbRun``)."""

    sent: Sent
    run_id: str

    @property
    def where(self) -> str: ...

    def send(self, points: list[MetricPoint], params: dict[str, str] | None, tags: dict[str, str],
             files: dict[str, Path]) -> None: ...

    def close(self, state: str) -> None: ...


def open_tracker(dest: Destination, snapshot: RunSnapshot, sent: Sent) -> Tracker:
    if dest.target == "mlflow":
        from core.sync.mlflow_target import MlflowRun

        return MlflowRun(dest, snapshot, sent)
    from core.sync.wandb_target import WandbRun

    return WandbRun(dest, snapshot, sent)


@dataclass
class SyncResult:
    """What a sync of one run sent (over every pass of a follow)."""

    run: str
    target: str
    destination: str
    tracker_run_id: str = ""
    state: str = ""
    records: int = 0  # metrics.jsonl records sent
    points: int = 0  # metric values sent (records' and telemetry's)
    artifacts: list[str] = field(default_factory=list)
    where: str = ""  # how to look at it: mlflow ui's command, wandb sync's, a URL
    passes: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        sent = (f"{self.points:,} values of {self.records:,} new records" if self.records or self.points
                else "nothing new")
        files = f", {len(self.artifacts)} files ({', '.join(self.artifacts[:4])}{' ...' if len(self.artifacts) > 4 else ''})"
        return (f"{self.run} -> {TARGET_NAMES[self.target]} run {self.tracker_run_id}: {sent}"
                f"{files if self.artifacts else ''}; {self.state}. Open it: {self.where}")


@dataclass(frozen=True)
class Batch:
    """What one pass sends: the metric points of the new records and telemetry, the params unless sent, the files."""

    records: int
    points: list[MetricPoint]
    telemetry_t: float
    params: dict[str, str] | None
    files: dict[str, Path]

    @property
    def empty(self) -> bool:
        return not (self.points or self.params or self.files)

    @classmethod
    def of(cls, run_dir: Path, snapshot: RunSnapshot, sent: Sent) -> Batch:
        new = snapshot.records[sent.first_unsent(snapshot.records):]
        telemetry, telemetry_t = telemetry_points(run_dir, sent.telemetry_t, StepClock(snapshot.records))
        config = RunDir(run_dir).config
        files = snapshot.artifacts if snapshot.state in TERMINAL else {k: v for k, v in snapshot.artifacts.items()
                                                                        if v == config}
        return cls(len(new), [p for rec in new for p in record_points(rec)] + telemetry, telemetry_t,
                   None if sent.params else snapshot.params, sent.changed(files))


class RunSync:
    """One run's sync to one destination; the tracker's run stays open between passes while a run is followed."""

    def __init__(self, run_dir: Path, dest: Destination):
        self.run_dir = Path(run_dir)
        self.dest = dest
        self.tracker: Tracker | None = None
        self.result = SyncResult(self.run_dir.name, dest.target, dest.key)

    def sync_pass(self) -> SyncResult:
        """Send what is new; ``SyncError`` naming the run, the tracker and why when it cannot."""
        try:
            with held_briefly(RunDir(self.run_dir).sync_lock, LOCK_WAIT_S, what=f"the sync of run {self.run_dir.name}"):
                self._send_new()
        except (SyncError, LockBusy):
            raise
        except Exception as exc:  # noqa: BLE001 - mlflow, sqlalchemy, requests and wandb raise their own kinds
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            raise SyncError(f"sync of run {self.run_dir.name} to {TARGET_NAMES[self.dest.target]} ({self.dest.where}) "
                            f"failed: {type(exc).__name__}: {first}") from None
        self.result.passes += 1
        return self.result

    def _send_new(self) -> None:
        snapshot = read_run(self.run_dir)
        sent = read_sent(self.run_dir, self.dest.key)
        batch = Batch.of(self.run_dir, snapshot, sent)
        r = self.result
        r.state, r.tracker_run_id = snapshot.state, sent.run_id or r.tracker_run_id
        r.where = r.where or self.dest.look_at
        if batch.empty and self.tracker is None:
            return  # nothing new: no tracker run is opened (W&B would write an offline folder for nothing)
        if self.tracker is None:
            recorded = sent.run_id
            self.tracker = open_tracker(self.dest, snapshot, sent)
            if recorded and sent.run_id != recorded:  # the tracker lost the run (deleted there): all of it again
                batch = Batch.of(self.run_dir, snapshot, sent)
        self.tracker.sent = sent
        self.tracker.send(batch.points, batch.params, snapshot.tags, batch.files)
        sent.params = True
        sent.mark_records(snapshot.records)
        sent.telemetry_t = batch.telemetry_t
        sent.mark_artifacts(batch.files)
        write_sent(self.run_dir, self.dest.key, sent)
        r.tracker_run_id, r.where = self.tracker.run_id, self.tracker.where
        r.records += batch.records
        r.points += len(batch.points)
        r.artifacts += [name for name in batch.files if name not in r.artifacts]

    def close(self) -> None:
        """End the tracker's run (MLflow: its status; W&B: finish) as the run's state says."""
        if self.tracker is not None:
            self.tracker.close(self.result.state)
            self.tracker = None


def sync_run(run_dir: Path, dest: Destination) -> SyncResult:
    """One pass: the run as its folder holds it now."""
    sync = RunSync(run_dir, dest)
    try:
        return sync.sync_pass()
    finally:
        sync.close()


def follow_runs(run_dirs: list[Path], dest: Destination, every_s: float = FOLLOW_EVERY_S,
                on_pass: Callable[[SyncResult], None] | None = None,
                on_error: Callable[[SyncResult, SyncError], None] | None = None) -> list[SyncResult]:
    """Sync each run every ``every_s`` until its state is final, then once more and end its tracker's run.

    ``on_error`` takes a failed pass (the run's result so far, the error) and the follow goes on (the supervisor's:
    a tracker that is down for a while must not end the sync of a night); without it the first failure is raised."""
    return follow([RunSync(run_dir, dest) for run_dir in run_dirs], every_s, on_pass, on_error)


def follow(syncs: list[RunSync], every_s: float = FOLLOW_EVERY_S, on_pass: Callable[[SyncResult], None] | None = None,
           on_error: Callable[[SyncResult, SyncError], None] | None = None) -> list[SyncResult]:
    """``follow_runs`` for any runs and destinations (``core.sync.auto``: one run to each of its trackers)."""
    live = list(syncs)
    try:
        while live:
            for sync in list(live):
                final = read_status(sync.run_dir).state in TERMINAL
                try:
                    result = sync.sync_pass()
                    if on_pass is not None:
                        on_pass(result)
                except (SyncError, LockBusy) as exc:
                    if on_error is None:
                        raise
                    on_error(sync.result, exc if isinstance(exc, SyncError) else SyncError(str(exc)))
                if final:
                    sync.close()
                    live.remove(sync)
            _wait_while_live([s.run_dir for s in live], every_s)
    finally:
        for sync in syncs:
            sync.close()
    return [sync.result for sync in syncs]


def _wait_while_live(run_dirs: list[Path], every_s: float) -> None:
    """Until ``every_s`` passed or one of the runs ended (its last pass comes at once)."""
    deadline = time.monotonic() + every_s
    while run_dirs and time.monotonic() < deadline:
        if any(read_status(d).state in TERMINAL for d in run_dirs):
            return
        time.sleep(min(1.0, every_s))
