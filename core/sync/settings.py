"""``RLPANEL_HOME/sync.yaml``: where a sync goes when the command line does not say (and where ``runtime.sync`` goes).

```yaml
mlflow: {uri: "http://mlflow.lab:5000", experiment: rlpanel}   # uri empty: a SQLite store beside the runs folder
wandb: {project: rlpanel, entity: null, online: false, dir: null} # dir empty: <runs>/.wandb; online needs wandb login
```

``rlpanel sync ... --remember`` and the Sync dialog's "Remember" write it. Read with the project's safe YAML
reader; a wrong value is reported naming the field, and the file is never overwritten by a reader.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from core.sync.source import SyncError
from core.util.files import write_atomic
from core.util.paths import user_home
from core.util.yaml_reader import Limits, read_yaml_mapping

FILE_NAME = "sync.yaml"
LIMITS = Limits(max_bytes=64 * 1024, what="sync.yaml", fix="it holds mlflow: {uri, experiment} and wandb: {project, ...}")
TARGETS = ("mlflow", "wandb")
Target = Literal["mlflow", "wandb"]
DEFAULT_NAME = "rlpanel"  # the MLflow experiment and the W&B project when none is given
MLFLOW_DB = "mlflow.db"  # beside the runs folder: `mlflow ui --backend-store-uri sqlite:///...` opens it
MLFLOW_ARTIFACTS = "mlflow-artifacts"  # beside it: the SQLite store's artifact root
WANDB_DIR = ".wandb"  # in the runs folder (a dot folder: never listed as a run); wandb writes wandb/ inside


@dataclass(frozen=True)
class MlflowSettings:
    uri: str | None = None
    experiment: str = DEFAULT_NAME


@dataclass(frozen=True)
class WandbSettings:
    project: str = DEFAULT_NAME
    entity: str | None = None
    online: bool = False
    dir: str | None = None


@dataclass(frozen=True)
class SyncSettings:
    mlflow: MlflowSettings = field(default_factory=MlflowSettings)
    wandb: WandbSettings = field(default_factory=WandbSettings)


@dataclass(frozen=True)
class Destination:
    """One place a run is synced to: MLflow's tracking URI and experiment, or W&B's folder, project and mode."""

    target: Target
    where: str  # MLflow: the tracking URI; W&B: the folder its offline runs are written in
    name: str  # the experiment or the project
    entity: str | None = None
    online: bool = False

    @property
    def key(self) -> str:
        """The ledger's key: a run synced to another store or project is another run there."""
        return f"mlflow {self.where} {self.name}" if self.target == "mlflow" else f"wandb {self.entity or ''}/{self.name}"

    @property
    def look_at(self) -> str:
        """How a user opens what was sent: mlflow ui's command for a SQLite store, wandb sync's for offline runs."""
        if self.target == "mlflow":
            return f"mlflow ui --backend-store-uri {self.where}" if self.where.startswith("sqlite:") else self.where
        return f"https://wandb.ai ({self.name})" if self.online else f"wandb sync {Path(self.where) / 'wandb'}"


def settings_path() -> Path:
    return user_home() / FILE_NAME


def _text(data: dict[str, Any], key: str, where: str, default: str | None) -> str | None:
    value = data.get(key, default)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise SyncError(f"{where}.{key}: expected text, got {value!r}; fix or remove it in {settings_path()}")
    return value.strip() if isinstance(value, str) else None


def _section(data: dict[str, Any], name: str, keys: tuple[str, ...]) -> dict[str, Any]:
    section = data.get(name) or {}
    if not isinstance(section, dict):
        raise SyncError(f"{FILE_NAME}: {name}: expected a mapping of {', '.join(keys)}; fix it in {settings_path()}")
    unknown = sorted(str(k) for k in section if k not in keys)
    if unknown:
        raise SyncError(f"{FILE_NAME}: {name}: unknown key {', '.join(unknown)}; it holds {', '.join(keys)}")
    return section


def settings_from_data(data: dict[str, Any]) -> SyncSettings:
    unknown = sorted(str(k) for k in data if k not in TARGETS)
    if unknown:
        raise SyncError(f"{FILE_NAME}: unknown key {', '.join(unknown)}; the file holds mlflow and wandb")
    m = _section(data, "mlflow", ("uri", "experiment"))
    w = _section(data, "wandb", ("project", "entity", "online", "dir"))
    online = w.get("online", False)
    if not isinstance(online, bool):
        raise SyncError(f"{FILE_NAME}: wandb.online: expected true or false, got {online!r}")
    return SyncSettings(
        MlflowSettings(_text(m, "uri", "mlflow", None), _text(m, "experiment", "mlflow", DEFAULT_NAME) or DEFAULT_NAME),
        WandbSettings(_text(w, "project", "wandb", DEFAULT_NAME) or DEFAULT_NAME, _text(w, "entity", "wandb", None),
                      online, _text(w, "dir", "wandb", None)))


def load_sync_settings(path: Path | None = None) -> SyncSettings:
    """The settings in ``path`` (default ``RLPANEL_HOME/sync.yaml``); the defaults when there is no file."""
    path = path or settings_path()
    if not path.exists():
        return SyncSettings()
    try:
        return settings_from_data(read_yaml_mapping(path, LIMITS))
    except ValueError as exc:
        raise SyncError(str(exc)) from None
    except SyncError as exc:
        raise SyncError(f"{path}: {exc}") from None


def save_sync_settings(settings: SyncSettings, path: Path | None = None) -> Path:
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# rlpanel sync: where `rlpanel sync` and runtime.sync send runs (rlpanel sync --remember writes it)\n"
    write_atomic(path, text + yaml.safe_dump(asdict(settings), sort_keys=False, allow_unicode=True))
    return path


def default_mlflow_uri(runs_dir: Path) -> str:
    """The SQLite store beside the runs folder (MLflow's file store is in maintenance mode)."""
    return f"sqlite:///{(Path(runs_dir).resolve().parent / MLFLOW_DB).as_posix()}"


def destination(target: str, runs_dir: Path, settings: SyncSettings, *, uri: str | None = None, name: str | None = None,
                online: bool | None = None) -> Destination:
    """Where ``target`` sends runs of ``runs_dir``: the given values, else the settings', else the defaults."""
    if target == "mlflow":
        return Destination("mlflow", uri or settings.mlflow.uri or default_mlflow_uri(runs_dir),
                           name or settings.mlflow.experiment)
    if target == "wandb":
        folder = uri or settings.wandb.dir or str(Path(runs_dir).resolve() / WANDB_DIR)
        return Destination("wandb", folder, name or settings.wandb.project, settings.wandb.entity,
                           settings.wandb.online if online is None else online)
    raise SyncError(f"--to {target}: not a sync target; use mlflow or wandb")


def remembered(settings: SyncSettings, dest: Destination, runs_dir: Path) -> SyncSettings:
    """``settings`` with ``dest`` as its target's default (a default location is kept as "default")."""
    if dest.target == "mlflow":
        uri = None if dest.where == default_mlflow_uri(runs_dir) else dest.where
        return replace(settings, mlflow=MlflowSettings(uri, dest.name))
    folder = None if Path(dest.where) == Path(runs_dir).resolve() / WANDB_DIR else dest.where
    return replace(settings, wandb=WandbSettings(dest.name, dest.entity, dest.online, folder))
