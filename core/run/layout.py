"""Every file name of a run folder, in one place: ``RunDir(path).status`` and so on.

The worker writes a run folder; everyone else reads it (docs/run-folder.md).
"""

from __future__ import annotations

from pathlib import Path

# The files of one checkpoint, by part; "manifest" (step_N.json, written after the others) lists
# them with their sizes, so a reader can tell a complete checkpoint from one cut short.
CHECKPOINT_PARTS = {"model": ".zip", "replay_buffer": "_replay.pkl", "vecnormalize": "_vecnormalize.pkl",
                    "manifest": ".json"}
CHECKPOINT_TEMP_PREFIX = ".tmp-"
# The best checkpoint by evaluation mean (kept by the worker's evaluation, beside the last ones): its files
# by part, then best.json (step, mean reward, files, sizes) written last, like a step's manifest.
BEST_CHECKPOINT = {"model": "best.zip", "vecnormalize": "best_vecnormalize.pkl", "manifest": "best.json"}


class RunDir:
    """The paths of one run folder."""

    __slots__ = ("path",)

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def name(self) -> str:
        """The run id."""
        return self.path.name

    @property
    def config(self) -> Path:
        """The resolved config as launched (``config.yaml``)."""
        return self.path / "config.yaml"

    @property
    def status(self) -> Path:
        """State, pid, times, error; replaced atomically (``status.json``)."""
        return self.path / "status.json"

    @property
    def metrics(self) -> Path:
        """Episode, progress, train, eval and event records (``metrics.jsonl``)."""
        return self.path / "metrics.jsonl"

    @property
    def superseded(self) -> Path:
        """Records of an interrupted attempt past the checkpoint it resumed from."""
        return self.path / "metrics.superseded.jsonl"

    @property
    def annotations(self) -> Path:
        """The user's display name, tags and note for the run (``annotations.json``; the window and
        ``rlpanel annotate`` write it, never the worker)."""
        return self.path / "annotations.json"

    @property
    def history_cache(self) -> Path:
        """The window's cache of the records as columns (``cache/``): rebuilt from the JSONL files, never the source."""
        return self.path / "cache"

    def cache_of(self, source: Path) -> Path:
        """The cache file of ``metrics.jsonl`` or ``telemetry.jsonl``: ``cache/<stem>.cols``."""
        return self.history_cache / f"{Path(source).stem}.cols"

    @property
    def telemetry(self) -> Path:
        """GPU and process samples (``telemetry.jsonl``)."""
        return self.path / "telemetry.jsonl"

    @property
    def worker_log(self) -> Path:
        return self.path / "worker.log"

    @property
    def summary(self) -> Path:
        """Written last: what the run achieved (``summary.json``)."""
        return self.path / "summary.json"

    @property
    def stop_request(self) -> Path:
        """Created by the window or the CLI to ask for a graceful stop (``STOP``)."""
        return self.path / "STOP"

    @property
    def lock(self) -> Path:
        """Held by the run's one writer (``worker.lock``)."""
        return self.path / "worker.lock"

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    @property
    def superseded_checkpoints(self) -> Path:
        """The checkpoints of the attempt a restart set aside (``checkpoints.superseded/``)."""
        return self.path / "checkpoints.superseded"

    @property
    def latest_checkpoint(self) -> Path:
        """Names the newest complete checkpoint (``checkpoints/latest.json``)."""
        return self.checkpoints / "latest.json"

    def checkpoint_file(self, step: int, part: str) -> Path:
        """``checkpoints/step_000000012345.zip`` and its ``_replay.pkl``, ``_vecnormalize.pkl``, ``.json``."""
        return self.checkpoints / f"step_{int(step):012d}{CHECKPOINT_PARTS[part]}"

    def best_checkpoint_file(self, part: str) -> Path:
        """``checkpoints/best.zip``, ``best_vecnormalize.pkl``, ``best.json``: the best evaluation's checkpoint."""
        return self.checkpoints / BEST_CHECKPOINT[part]

    @property
    def evaluations_file(self) -> Path:
        """``evaluations.jsonl``: each ``rlpanel evaluate`` of a checkpoint, one JSON object a line."""
        return self.path / "evaluations.jsonl"

    def checkpoint_temp(self, final: Path) -> Path:
        """Where a checkpoint file is written before it is renamed to ``final`` (same suffix: SB3 adds one)."""
        return final.with_name(CHECKPOINT_TEMP_PREFIX + final.name)

    @property
    def sync_state(self) -> Path:
        """``sync.json``: per tracker destination (MLflow, W&B) its run id and what was sent (``core.sync.ledger``)."""
        return self.path / "sync.json"

    @property
    def sync_lock(self) -> Path:
        """Held by the one sync of this run at a time (``rlpanel sync``, the supervisor's ``runtime.sync``)."""
        return self.path / ".sync.lock"

    @property
    def space_reserve(self) -> Path:
        """A small file the worker keeps and deletes on a full disk to make room for its last words."""
        return self.path / ".space-reserve"

    @property
    def control_lock(self) -> Path:
        """Held for a moment by whoever launches, resumes or stops the run, so two never race."""
        return self.path / ".control.lock"

    @property
    def tensorboard(self) -> Path:
        return self.path / "tb"

    @property
    def monitor(self) -> Path:
        """SB3 Monitor CSVs."""
        return self.path / "monitor"

    @property
    def sb3_logs(self) -> Path:
        """SB3's own progress.csv / progress.json, one pair per attempt."""
        return self.path / "sb3"

    @property
    def evaluations(self) -> Path:
        """SB3's EvalCallback log."""
        return self.path / "eval"
