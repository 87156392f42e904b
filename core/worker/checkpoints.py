"""Atomic checkpoints: model .zip, replay buffer and VecNormalize stats, a manifest, then ``latest.json``.

Before anything is written, the records the checkpoint covers are flushed (``before_save``), so
a crash right after it never loses episodes behind its step. Each file is written under a
temporary name and renamed; the checkpoint's manifest (its files and their sizes) comes next and
``latest.json`` last, so a reader (``core.run.checkpoints``) can always tell a complete
checkpoint from one cut short. A failed save (a full disk) removes its temporary and partial
files and raises ``CheckpointError`` naming the file and the free space.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import VecNormalize

from core.run import records
from core.run.checkpoints import STEP_FILE, find_checkpoint
from core.run.layout import CHECKPOINT_TEMP_PREFIX, RunDir
from core.util.files import describe_os_error, replace_retrying, write_json_atomic
from core.util.jsonl import JsonlWriter


class CheckpointError(OSError):
    """A checkpoint could not be written (its partial files are removed); the message says why."""


class Checkpointer:
    """Writes the run's checkpoints and keeps the newest ``keep``.

    ``before_save`` runs first (the recorder's flush); ``allowed`` returns a reason to refuse a
    save (a model whose losses went NaN must not replace the last good checkpoint), or None. Each save runs
    inside ``timed()`` (the update cycles' clock times it aside).
    """

    def __init__(self, run_dir: Path, keep: int, events: JsonlWriter | None = None,
                 before_save: Callable[[], None] | None = None, allowed: Callable[[], str | None] | None = None,
                 timed: Callable[[], AbstractContextManager[object]] = nullcontext):
        self.layout = RunDir(run_dir)
        self.folder = self.layout.checkpoints
        self.folder.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.events = events
        self.before_save = before_save
        self.allowed = allowed
        self.timed = timed
        self.last_step: int | None = None
        self.removed_temps = self._remove_temps()

    def _remove_temps(self) -> int:
        """Files a killed save left under temporary names: never part of a checkpoint."""
        n = 0
        for path in self.folder.glob(f"{CHECKPOINT_TEMP_PREFIX}*"):
            path.unlink(missing_ok=True)
            n += 1
        return n

    def save(self, model: BaseAlgorithm) -> dict[str, Any] | None:
        """Save a checkpoint at the model's step; its entry, or None when ``allowed`` refused."""
        with self.timed():
            return self._save(model)

    def _save(self, model: BaseAlgorithm) -> dict[str, Any] | None:
        step = int(model.num_timesteps)
        if step == self.last_step:
            found = find_checkpoint(self.layout.path).checkpoint
            return found.to_entry() if found else None
        refused = self.allowed() if self.allowed is not None else None
        if refused:
            return None
        if self.before_save is not None:
            self.before_save()
        started = time.monotonic()
        entry: dict[str, Any] = {"step": step, "t": time.time()}
        written: list[Path] = []
        try:
            self._write(model, step, entry, written)
            sizes = {p.name: p.stat().st_size for p in written}
            entry["sizes"] = sizes
            write_json_atomic(self.layout.checkpoint_file(step, "manifest"), entry)
            write_json_atomic(self.layout.latest_checkpoint, entry)
        except OSError as exc:
            for path in written:
                path.unlink(missing_ok=True)
            self.layout.checkpoint_file(step, "manifest").unlink(missing_ok=True)
            self._remove_temps()
            target = exc.filename if isinstance(exc.filename, str) else ""
            raise CheckpointError(exc.errno, describe_os_error(exc, f"writing checkpoint step_{step:012d} "
                                                                    f"({Path(target).name or 'its files'})"),
                                  target or None) from exc
        self.last_step = step
        self._prune()
        if self.events is not None:
            took = time.monotonic() - started
            message = f"checkpoint saved at step {step:,} ({sum(sizes.values()) / 2**20:.1f} MiB, {took:.1f} s)"
            self.events.write([records.event(message, step=step)])
        return entry

    def _write(self, model: BaseAlgorithm, step: int, entry: dict[str, Any], written: list[Path]) -> None:
        self._atomic(lambda p: model.save(p), self.layout.checkpoint_file(step, "model"), written)
        entry["model"] = written[-1].name
        if isinstance(model, OffPolicyAlgorithm) and model.replay_buffer is not None:
            self._atomic(lambda p: model.save_replay_buffer(p), self.layout.checkpoint_file(step, "replay_buffer"), written)
            entry["replay_buffer"] = written[-1].name
        venv = model.get_vec_normalize_env()
        if isinstance(venv, VecNormalize):
            self._atomic(lambda p: venv.save(str(p)), self.layout.checkpoint_file(step, "vecnormalize"), written)
            entry["vecnormalize"] = written[-1].name

    def _atomic(self, save: Callable[[Path], object], final: Path, written: list[Path]) -> None:
        tmp = write_temp(self.layout, save, final)
        replace_retrying(tmp, final)
        written.append(final)

    def _prune(self) -> None:
        """All but the newest ``keep`` checkpoints removed, each model first and manifest last (a reader never takes
        one half removed). A file that cannot be removed now (on Windows: open in an evaluating process for the
        moment it reads it) is left for the next save's prune, which finds its step by any of its files."""
        steps = sorted({match.group(1) for p in self.folder.glob("step_*") if (match := STEP_FILE.fullmatch(p.name))})
        kept = [s for s in steps if (self.folder / f"step_{s}.zip").exists()][-self.keep:]
        for old in (s for s in steps if kept and s < kept[0]):
            for path in sorted(self.folder.glob(f"step_{old}*"), key=lambda p: (p.suffix != ".zip", p.suffix == ".json")):
                try:
                    path.unlink(missing_ok=True)
                except OSError:  # held open elsewhere (Windows), or not a file: the next prune tries again
                    continue


def write_temp(layout: RunDir, save: Callable[[Path], object], final: Path) -> Path:
    """``save`` into ``final``'s temporary name (``.tmp-``: a killed save's leftover is removed at the next start),
    fsynced; returns the temporary path. A failed save removes it and raises (an ``OSError`` names ``final``)."""
    tmp = layout.checkpoint_temp(final)  # SB3 appends .zip/.pkl when the suffix is missing: keep it
    try:
        save(tmp)
        with open(tmp, "rb+") as fh:  # on disk before the manifest says it is complete
            os.fsync(fh.fileno())
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.filename is None:
            exc.filename = str(final)
        raise
    except Exception:
        tmp.unlink(missing_ok=True)
        raise
    return tmp
