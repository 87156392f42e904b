"""Where a run goes on a cluster: the address, the nodes' python, and the runs folder as the nodes see it.

A ``ClusterTarget`` is what a queue's or a sweep's state keeps and what a run's ``status.json``
carries under ``ray`` (with the job's id once submitted), so a resume or a restart of the run
submits again to the same cluster. The nodes' path of a run folder: the same path by default; a
Windows laptop with the runs folder at ``Z:\\runs`` and Linux nodes mounting it at ``/mnt/runs``
give ``runs="/mnt/runs"`` (``--ray-runs``), and each run folder is that folder joined with the
run's id, with the nodes' own separators.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any

from core.cluster.client import ClusterError, normalize_address
from core.util.paths import absolute

DEFAULT_PYTHON = "python"  # the nodes' python, as their PATH finds it: never this machine's sys.executable


@dataclass(frozen=True)
class ClusterTarget:
    address: str
    python: str = DEFAULT_PYTHON
    runs: str | None = None  # the runs folder as the nodes see it (None: the same path as here)

    @classmethod
    def make(cls, address: str, python: str | None = None, runs: str | None = None) -> ClusterTarget:
        """A checked target: the address as the dashboard URL, a python and a nodes' runs folder that are text."""
        python = (python or DEFAULT_PYTHON).strip()
        if not python or "\n" in python:
            raise ClusterError(f"the nodes' python {python!r} is not a command: give e.g. --ray-python /opt/venv/bin/python")
        runs = runs.strip() if runs else None
        if runs is not None and not (runs.startswith("/") or re.match(r"^([A-Za-z]:[\\/]|\\\\)", runs)):
            raise ClusterError(f"--ray-runs {runs!r} is not an absolute path on the nodes: give e.g. --ray-runs /mnt/runs")
        return cls(normalize_address(address), python, runs)

    @classmethod
    def from_json(cls, data: Any) -> ClusterTarget | None:
        """The target a state or a status records (None when it records none)."""
        if not isinstance(data, dict) or not isinstance(data.get("address"), str):
            return None
        runs = data.get("runs")
        return cls(data["address"], str(data.get("python") or DEFAULT_PYTHON), str(runs) if runs else None)

    def to_json(self) -> dict[str, Any]:
        return {"address": self.address, "python": self.python, "runs": self.runs}

    def node_path(self, local: PurePath, runs_dir: PurePath | None = None) -> PurePath:
        """``local`` (a run folder, or a file of the runs folder) as the nodes see it.

        ``local`` is this machine's path (a Windows path on a Windows laptop: ``Z:\\runs\\RUN``), made
        absolute here; ``runs_dir`` is the runs folder it lies in (default: its parent).
        """
        local = local if local.is_absolute() else absolute(Path(local))
        if self.runs is None:
            return local
        base = runs_dir if runs_dir is not None else local.parent
        rel = local.relative_to(base if base.is_absolute() else absolute(Path(base)))
        node: PurePath = PureWindowsPath(self.runs) if _windows_path(self.runs) else PurePosixPath(self.runs)
        return node.joinpath(*rel.parts)

    def command(self, module: str, *args: str) -> str:
        """``python -m module args`` as the nodes' shell runs it (Ray runs an entrypoint through ``sh -c``)."""
        return " ".join([shlex.quote(self.python), "-m", module, *(shlex.quote(a) for a in args)])


def _windows_path(path: str) -> bool:
    return bool(re.match(r"^([A-Za-z]:[\\/]|\\\\)", path))
