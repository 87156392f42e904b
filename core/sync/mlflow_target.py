"""A run into MLflow through ``MlflowClient``: one MLflow run per rlpanel run, in the destination's experiment.

mlflow is imported here only, when a sync to MLflow starts: without the ``mlflow`` extra everything else runs and
this says the one line that installs it. Metrics go in ``log_batch`` chunks at MLflow's own limits (a step each:
the run's timestep); params are sent once (MLflow refuses one logged again with another value), each value cut at
MLflow's length limit with a note; tags each time (the state changes); an artifact when it is new or changed.
A SQLite store gets its experiment's artifacts beside the database file (MLflow's default is ./mlruns, wherever
the command ran).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from core.sync.ledger import Sent
from core.sync.settings import MLFLOW_ARTIFACTS, Destination
from core.sync.source import MetricPoint, RunSnapshot, SyncError
from core.util.text import safe_name

MISSING = 'MLflow sync needs the mlflow extra: pip install "rlpanel[mlflow]"'
BAD_KEY_CHARS = re.compile(r"[^\w\-. /:]")  # MLflow's names take letters, digits, _ - . space / and :
FINAL_STATUS = {"finished": "FINISHED", "stopped": "KILLED", "failed": "FAILED", "crashed": "FAILED"}


def _client(uri: str) -> Any:
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise SyncError(MISSING) from None
    for name in ("mlflow", "alembic"):  # their INFO lines (a new store's tables) would fill the command's output
        logging.getLogger(name).setLevel(logging.WARNING)
    return MlflowClient(tracking_uri=uri)


def _artifact_location(dest: Destination) -> str | None:
    """Beside a SQLite store's file; a server's own default otherwise."""
    if not dest.where.startswith("sqlite:///"):
        return None
    db = Path(dest.where.removeprefix("sqlite:///"))
    return (db.parent / MLFLOW_ARTIFACTS / safe_name(dest.name)).resolve().as_uri()


class MlflowRun:
    """The MLflow run of one rlpanel run: opened (or created) at once, then sent to."""

    def __init__(self, dest: Destination, snapshot: RunSnapshot, sent: Sent):
        self.client = _client(dest.where)  # first: it says how to install mlflow when it is missing
        from mlflow.exceptions import MlflowException

        self.dest = dest
        self.sent = sent
        try:
            self.run_id = self._open(snapshot)
        except MlflowException as exc:
            raise SyncError(f"MLflow at {dest.where} refused the run: {str(exc).splitlines()[0][:300]}") from None

    def _open(self, snapshot: RunSnapshot) -> str:
        from mlflow.exceptions import MlflowException

        if self.sent.run_id:
            try:
                if self.client.get_run(self.sent.run_id).info.lifecycle_stage == "active":
                    return self.sent.run_id
            except MlflowException:
                pass  # deleted from the store: the run is sent whole again, as a new MLflow run
            self.sent.forget()
        experiment = self.client.get_experiment_by_name(self.dest.name)
        experiment_id = (experiment.experiment_id if experiment is not None else
                         self.client.create_experiment(self.dest.name, artifact_location=_artifact_location(self.dest)))
        run = self.client.create_run(experiment_id, run_name=snapshot.label, tags={"rlpanel.run_id": snapshot.run_id})
        self.sent.run_id = run.info.run_id
        return str(run.info.run_id)

    def send(self, points: list[MetricPoint], params: dict[str, str] | None, tags: dict[str, str],
             files: dict[str, Path]) -> None:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.utils.validation import MAX_METRICS_PER_BATCH, MAX_PARAM_VAL_LENGTH, MAX_PARAMS_TAGS_PER_BATCH

        if params is not None:
            entries = [Param(key, cut_param(value, MAX_PARAM_VAL_LENGTH)) for key, value in params.items()]
            for i in range(0, len(entries), MAX_PARAMS_TAGS_PER_BATCH):
                self.client.log_batch(self.run_id, params=entries[i:i + MAX_PARAMS_TAGS_PER_BATCH])
        self.client.log_batch(self.run_id, tags=[RunTag(k, v) for k, v in tags.items()][:MAX_PARAMS_TAGS_PER_BATCH])
        metrics = [Metric(metric_key(p.key), p.value, int(p.t * 1000), p.step) for p in points]
        for i in range(0, len(metrics), MAX_METRICS_PER_BATCH):
            self.client.log_batch(self.run_id, metrics=metrics[i:i + MAX_METRICS_PER_BATCH])
        for name, path in files.items():
            folder = str(Path(name).parent.as_posix())
            self.client.log_artifact(self.run_id, str(path), artifact_path=None if folder == "." else folder)

    def close(self, state: str) -> None:
        """A run whose state is final ends its MLflow run with the matching status; a live one stays RUNNING."""
        if state in FINAL_STATUS:
            self.client.set_terminated(self.run_id, FINAL_STATUS[state])

    @property
    def where(self) -> str:
        return self.dest.look_at


def metric_key(key: str) -> str:
    return BAD_KEY_CHARS.sub("_", key)[:250]


def cut_param(value: str, limit: int) -> str:
    """A param's value within MLflow's limit; a longer one cut, saying so (config.yaml, an artifact, holds it whole)."""
    if len(value) <= limit:
        return value
    note = f" ... (cut from {len(value):,} characters: config.yaml holds it whole)"
    return value[: limit - len(note)] + note
