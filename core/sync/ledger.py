"""``sync.json`` in the run folder: what each destination already holds of the run, so a sync sends only the new.

One entry per destination (``mlflow sqlite:///...``, ``wandb PROJECT``): the tracker's run id, how many of
``metrics.jsonl``'s records were sent and the time of the last one, the telemetry sent up to, whether the params
went (MLflow refuses a param logged twice with another value), the step counter W&B was given, and each artifact's
size and modification time when it was sent (unchanged ones are not sent again).

A resume rewrites ``metrics.jsonl`` with the records up to its checkpoint (the rest go to
``metrics.superseded.jsonl``): when the record the count ends on is no longer the one sent, the records kept from
before are those at or before the last sent time, and what follows them is new. Values of an interrupted attempt
past its checkpoint stay in the tracker as they were sent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.util.files import read_json, write_json_atomic


@dataclass
class Sent:
    """What one destination holds of a run."""

    run_id: str | None = None  # the tracker's own id of the run
    records: int = 0  # metrics.jsonl records sent
    last_t: float | None = None  # the time of the last record sent
    telemetry_t: float = 0.0  # telemetry sent up to this time
    params: bool = False
    logged_steps: int = 0  # W&B: history rows written (its _step goes on from here)
    artifacts: dict[str, list[int]] = field(default_factory=dict)  # name -> [size, mtime_ns] when sent

    @classmethod
    def from_json(cls, data: Any) -> Sent:
        if not isinstance(data, dict):
            return cls()
        out = cls()
        for name, kind in (("run_id", str), ("records", int), ("last_t", float), ("telemetry_t", float),
                           ("params", bool), ("logged_steps", int)):
            value = data.get(name)
            if isinstance(value, kind) or (kind is float and isinstance(value, int) and not isinstance(value, bool)):
                setattr(out, name, value)
        arts = data.get("artifacts")
        if isinstance(arts, dict):
            out.artifacts = {str(k): list(v) for k, v in arts.items() if isinstance(v, list) and len(v) == 2}
        return out

    def forget(self) -> None:
        """The destination lost the run (deleted there): everything is sent again."""
        fresh = Sent()
        for f in fields(self):
            setattr(self, f.name, getattr(fresh, f.name))

    def first_unsent(self, records: list[dict[str, Any]]) -> int:
        """The index of the first record of ``records`` (metrics.jsonl as it is now) not sent yet."""
        if self.records == 0 or self.last_t is None:
            return 0
        if self.records <= len(records) and records[self.records - 1].get("t") == self.last_t:
            return self.records
        last_t = self.last_t  # the file was rewritten by a resume: its kept records are those sent before
        return sum(1 for r in records if isinstance(r.get("t"), int | float) and r["t"] <= last_t)

    def mark_records(self, records: list[dict[str, Any]]) -> None:
        """``records`` (the whole file as read) are sent."""
        self.records = len(records)
        self.last_t = records[-1].get("t") if records else None

    def changed(self, files: dict[str, Path]) -> dict[str, Path]:
        """The files of ``files`` not sent yet, or changed since."""
        return {name: path for name, path in files.items() if self.artifacts.get(name) != _identity(path)}

    def mark_artifacts(self, files: dict[str, Path]) -> None:
        self.artifacts.update({name: _identity(path) for name, path in files.items()})


def _identity(path: Path) -> list[int]:
    try:
        stat = path.stat()
    except OSError:
        return [-1, -1]
    return [stat.st_size, stat.st_mtime_ns]


def read_sent(run_dir: Path, destination: str) -> Sent:
    """What ``destination`` holds of the run (nothing when it was never synced there)."""
    data = read_json(RunDir(run_dir).sync_state, default=None)
    return Sent.from_json(data.get(destination) if isinstance(data, dict) else None)


def destinations(run_dir: Path) -> list[str]:
    """The destinations the run was synced to."""
    data = read_json(RunDir(run_dir).sync_state, default=None)
    return sorted(data) if isinstance(data, dict) else []


def write_sent(run_dir: Path, destination: str, sent: Sent) -> None:
    """Record what ``destination`` holds now (the other destinations' entries kept)."""
    path = RunDir(run_dir).sync_state
    data = read_json(path, default=None)
    data = data if isinstance(data, dict) else {}
    data[destination] = asdict(sent)
    write_json_atomic(path, data)
