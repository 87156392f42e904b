"""Which checkpoint a run resumes from: the newest complete one, confined to its own folder.

The worker (``core.worker.checkpoints``) writes each checkpoint's files under temporary names,
renames them, then writes the checkpoint's manifest (``step_N.json``: its files and their sizes)
and last ``latest.json`` (the same entry). A reader trusts none of it blindly: a name must be a
plain checkpoint file name of the same step (never a path: nothing outside the run folder is
ever opened), each file must exist with the size the manifest recorded, and the model must be
a readable zip. When the newest checkpoint fails a check (a disk that filled up, a copy cut
short, a hand-edited ``latest.json``), the next older complete one is used and the reason is
kept, so the resume can say what it skipped (docs/run-folder.md).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.run.layout import BEST_CHECKPOINT, CHECKPOINT_PARTS, RunDir
from core.util.files import read_json

FILE_PARTS = ("model", "replay_buffer", "vecnormalize")
STEP_FILE = re.compile(r"step_(\d{12})(\.zip|_replay\.pkl|_vecnormalize\.pkl|\.json)")  # a step checkpoint's file


@dataclass(frozen=True)
class Checkpoint:
    """A complete checkpoint: its step and its files (plain names inside ``checkpoints/``) by part."""

    step: int
    files: dict[str, str]
    note: str = field(default="", compare=False)  # ``last`` when newer ones were damaged: what was passed over

    def path(self, run_dir: Path, part: str) -> Path | None:
        name = self.files.get(part)
        return RunDir(run_dir).checkpoints / name if name else None

    def to_entry(self) -> dict[str, Any]:
        return {"step": self.step, **self.files}


@dataclass
class CheckpointChoice:
    """The checkpoint to resume from (or None) and why newer ones were passed over."""

    checkpoint: Checkpoint | None
    skipped: list[str] = field(default_factory=list)

    @property
    def note(self) -> str:
        """One line for an event or a message: what was skipped, and what is used instead."""
        if not self.skipped:
            return ""
        used = f"using the checkpoint at step {self.checkpoint.step:,}" if self.checkpoint else "no complete checkpoint is left"
        return f"{'; '.join(self.skipped[:3])}{' ...' if len(self.skipped) > 3 else ''}: {used}"


def entry_problem(entry: Any, folder: Path, best: bool = False) -> str | None:
    """Why ``entry`` (latest.json, a manifest, or ``best.json`` when ``best``) does not name a complete
    checkpoint in ``folder``, or None."""
    if not isinstance(entry, dict):
        return "is not a checkpoint entry"
    step = entry.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        return "names no step"
    if not entry.get("model"):
        return "names no model file"
    sizes: dict[str, Any] = entry["sizes"] if isinstance(entry.get("sizes"), dict) else {}
    for part in FILE_PARTS:
        name = entry.get(part)
        if name is None:
            continue
        expected = BEST_CHECKPOINT[part] if best else f"step_{step:012d}{CHECKPOINT_PARTS[part]}"
        problem = _file_problem(name, part, expected, folder, sizes.get(name))
        if problem:
            return problem
    return None


def _file_problem(name: Any, part: str, expected: str, folder: Path, size: Any) -> str | None:
    if not isinstance(name, str) or name != expected:
        return f"names {str(name)[:80]!r} as its {part}, not {expected!r} in the run's checkpoints folder"
    path = folder / name
    try:
        if path.is_symlink() or not path.is_file():
            return f"{name} is missing"
        actual = path.stat().st_size
    except OSError as exc:
        return f"{name} cannot be read ({exc.strerror or exc})"
    if isinstance(size, int) and actual != size:
        return f"{name} is {actual:,} bytes, {size:,} were written (cut short)"
    if part == "model":
        return _zip_problem(path)
    if actual == 0:
        return f"{name} is empty"
    return None


def _zip_problem(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return f"{path.name} is not a complete zip file (cut short?)"
    if "data" not in names:
        return f"{path.name} holds no model data"
    return None


def _entries(run_dir: Path) -> list[tuple[str, Any]]:
    """Candidate entries, newest first: latest.json, then each manifest, then bare model files."""
    layout = RunDir(run_dir)
    out: list[tuple[str, Any]] = [("latest.json", read_json(layout.latest_checkpoint, default=None))]
    steps: dict[int, set[str]] = {}
    try:
        names = [p.name for p in layout.checkpoints.iterdir()]
    except OSError:
        names = []
    for name in names:
        match = STEP_FILE.fullmatch(name)
        if match:
            steps.setdefault(int(match.group(1)), set()).add(name)
    for step in sorted(steps, reverse=True):
        manifest = layout.checkpoint_file(step, "manifest")
        if manifest.name in steps[step]:
            out.append((manifest.name, read_json(manifest, default=None)))
        else:  # written before manifests existed: take the files that are there
            files = {part: layout.checkpoint_file(step, part).name for part in FILE_PARTS
                     if layout.checkpoint_file(step, part).name in steps[step]}
            out.append((f"step {step:,}", {"step": step, **files}))
    return out


def find_checkpoint(run_dir: Path) -> CheckpointChoice:
    """The newest complete checkpoint of ``run_dir`` and what was skipped on the way to it."""
    folder = RunDir(run_dir).checkpoints
    skipped: list[str] = []
    failed: set[int] = set()
    for label, entry in _entries(run_dir):
        if entry is None:
            continue
        step = entry.get("step") if isinstance(entry, dict) else None
        problem = entry_problem(entry, folder)
        if problem is None:
            return CheckpointChoice(Checkpoint(int(entry["step"]), {p: entry[p] for p in FILE_PARTS if entry.get(p)}), skipped)
        if isinstance(step, int) and not isinstance(step, bool):
            if step not in failed:  # a manifest failing like latest.json did says nothing new
                skipped.append(f"the checkpoint at step {step:,} ({label}) {problem}")
            failed.add(step)
        else:
            skipped.append(f"{label} {problem}")
    return CheckpointChoice(None, skipped)


def complete_checkpoints(run_dir: Path) -> list[Checkpoint]:
    """Every complete step checkpoint the run keeps, oldest first (a picker's list; ``best`` is apart)."""
    folder = RunDir(run_dir).checkpoints
    found: dict[int, Checkpoint] = {}
    for _label, entry in _entries(run_dir):
        if isinstance(entry, dict) and entry_problem(entry, folder) is None and int(entry["step"]) not in found:
            found[int(entry["step"])] = Checkpoint(int(entry["step"]), {p: entry[p] for p in FILE_PARTS if entry.get(p)})
    return [found[step] for step in sorted(found)]


@dataclass(frozen=True)
class BestCheckpoint(Checkpoint):
    """The checkpoint of the best evaluation so far (``best.json``): its step and evaluation mean."""

    mean_reward: float = float("nan")


def best_checkpoint(run_dir: Path) -> BestCheckpoint | None:
    """The run's best checkpoint when it is complete (None before its first evaluation, or when it is not)."""
    layout = RunDir(run_dir)
    entry = read_json(layout.best_checkpoint_file("manifest"), default=None)
    if entry_problem(entry, layout.checkpoints, best=True) is not None:
        return None
    mean = entry.get("mean_reward")
    return BestCheckpoint(int(entry["step"]), {p: entry[p] for p in FILE_PARTS if entry.get(p)},
                          mean_reward=float(mean) if isinstance(mean, (int, float)) else float("nan"))


def best_problem(run_dir: Path) -> str | None:
    """Why the best checkpoint the run kept cannot be used (``best.json`` or its files damaged), or None: none kept,
    or a complete one."""
    layout = RunDir(run_dir)
    manifest = layout.best_checkpoint_file("manifest")
    entry = read_json(manifest, default=None)
    if entry is None:
        kept = manifest.exists() or layout.best_checkpoint_file("model").exists()
        return f"best checkpoint cannot be used: {manifest.name} (its manifest) is missing or damaged" if kept else None
    problem = entry_problem(entry, layout.checkpoints, best=True)
    if problem is None:
        return None
    step = entry.get("step") if isinstance(entry, dict) else None
    which = f" (step {step:,})" if isinstance(step, int) and not isinstance(step, bool) else ""
    return f"best checkpoint{which} is damaged: {problem}"


def select_checkpoint(run_dir: Path, which: str = "last") -> Checkpoint:
    """The checkpoint a user names: ``last`` (the newest complete one), ``best`` or a step it keeps.

    Raises ``LookupError`` with what the run has instead.
    """
    which = str(which).strip().lower().replace(",", "").replace("_", "")
    if which in ("last", "latest"):
        choice = find_checkpoint(run_dir)
        if choice.checkpoint is None and choice.skipped:
            raise LookupError(f"run {Path(run_dir).name} has no complete checkpoint: {'; '.join(choice.skipped[:3])}")
        if choice.checkpoint is None:
            raise LookupError(f"run {Path(run_dir).name} has no complete checkpoint yet")
        return replace(choice.checkpoint, note=choice.note)
    if which == "best":
        best = best_checkpoint(run_dir)
        damaged = best_problem(run_dir) if best is None else None
        if damaged:
            raise LookupError(f"run {Path(run_dir).name}'s {damaged}; use --checkpoint last or a step")
        if best is None:
            raise LookupError(f"run {Path(run_dir).name} has no best checkpoint: it is kept when periodic evaluation "
                              "is on (Budget: Evaluate every); use --checkpoint last or a step")
        return best
    if not which.isdigit():
        raise LookupError(f"--checkpoint {which!r}: give last, best or a step number")
    kept = complete_checkpoints(run_dir)
    for checkpoint in kept:
        if checkpoint.step == int(which):
            return checkpoint
    steps = ", ".join(f"{c.step:,}" for c in kept) or "none"
    raise LookupError(f"run {Path(run_dir).name} keeps no checkpoint at step {int(which):,} (it keeps: {steps})")
