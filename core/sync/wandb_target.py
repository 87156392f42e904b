"""A run into Weights & Biases through ``wandb``'s API: offline by default, online with the user's own login.

wandb is imported here only, when a sync to W&B starts (the ``wandb`` extra). Offline, a run is written under
the destination's folder (``<runs>/.wandb/wandb/offline-run-*``), which ``wandb sync DIR`` uploads later; each
sync that sends something writes one such folder with the run's recorded id, and ``wandb sync`` uploads the
folders of one id in order, into one run. Metric points go as history rows, one per record, plotted against
``timestep`` (``define_metric``), each row at a step of W&B's own counter that goes on from the last sync's
(the ledger keeps it): W&B drops a row whose step goes back, and a resumed run's timesteps do.
"""

from __future__ import annotations

import json
import os
import re
from itertools import groupby
from pathlib import Path
from typing import Any

from core.sync.ledger import Sent
from core.sync.settings import Destination
from core.sync.source import MetricPoint, RunSnapshot, SyncError

MISSING = 'W&B sync needs the wandb extra: pip install "rlpanel[wandb]"'
STEP_KEY = "timestep"
TAG_KEYS = ("algo", "env", "engine", "preset", "group")  # the snapshot's tags W&B lists as the run's tags
MAX_TAG_CHARS = 64  # W&B refuses longer tags
FAILED_STATES = ("failed", "crashed")  # the W&B run ends failed (exit code 1); any other state ends it finished


def _wandb() -> Any:
    try:
        import wandb
    except ImportError:
        raise SyncError(MISSING) from None
    return wandb


def _tags(snapshot: RunSnapshot) -> list[str]:
    tags = [snapshot.tags[k] for k in TAG_KEYS if snapshot.tags.get(k)]
    tags += [t for t in snapshot.tags.get("user_tags", "").split(",") if t]
    return [t[:MAX_TAG_CHARS] for t in dict.fromkeys(tags)]


def _typed(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def artifact_name(run_id: str) -> str:
    """The run's artifact: W&B's names take letters, digits, - _ and ."""
    return re.sub(r"[^\w\-.]", "_", f"rlpanel-{run_id}")[:128]


class WandbRun:
    """The W&B run of one rlpanel run, open from the first sync to ``close``."""

    def __init__(self, dest: Destination, snapshot: RunSnapshot, sent: Sent):
        wandb = _wandb()
        self.dest = dest
        self.sent = sent
        Path(dest.where).mkdir(parents=True, exist_ok=True)
        # the params with the run's start (its run record holds them), typed again: flat_params wrote numbers and lists
        # as JSON, and W&B filters by value
        config = None if sent.params else {key: _typed(value) for key, value in snapshot.params.items()}
        os.environ.setdefault("WANDB_SILENT", "true")  # its banners would land in worker.log and the command's output
        try:
            self.run = wandb.init(
                project=dest.name, entity=dest.entity, id=sent.run_id, resume="allow", reinit="create_new",
                name=snapshot.label, config=config,
                dir=dest.where, mode="online" if dest.online else "offline", tags=_tags(snapshot),
                settings=wandb.Settings(console="off", save_code=False, disable_git=True, x_disable_stats=True))
        except Exception as exc:  # noqa: BLE001 - wandb raises its own kinds (no login, no network): one line
            how = ("W&B online needs your login: run wandb login, or sync offline (the default) and upload with "
                   "wandb sync" if dest.online else "W&B refused the offline run")
            raise SyncError(f"{how}: {type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}") from None
        self.run_id = self.sent.run_id = str(self.run.id)  # the first sync's id: wandb's own
        self.run.define_metric(STEP_KEY)
        self.run.define_metric("*", step_metric=STEP_KEY)

    def send(self, points: list[MetricPoint], params: dict[str, str] | None, tags: dict[str, str],
             files: dict[str, Path]) -> None:
        if params is not None and not self.run.config.keys():  # a run opened before its params were due
            self.run.config.update({key: _typed(value) for key, value in params.items()}, allow_val_change=True)
        self.run.summary.update({f"rlpanel/{key}": value for key, value in tags.items()})
        rows = groupby(sorted(points, key=lambda p: (p.t, p.step)), key=lambda p: (p.t, p.step))
        for (_t, step), group in rows:
            self.run.log({STEP_KEY: step, **{p.key: p.value for p in group}}, step=self.sent.logged_steps)
            self.sent.logged_steps += 1
        if files:
            wandb = _wandb()
            artifact = wandb.Artifact(artifact_name(self.run_id), type="rlpanel-run")
            for name, path in files.items():
                artifact.add_file(str(path), name=name)
            self.run.log_artifact(artifact)

    def close(self, state: str) -> None:
        self.run.finish(exit_code=1 if state in FAILED_STATES else 0)

    @property
    def where(self) -> str:
        """Online: the run's page; offline: the command that uploads its folders."""
        url = getattr(self.run, "url", None) if self.dest.online else None
        return str(url) if url else self.dest.look_at
