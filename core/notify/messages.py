"""What a notification says: the run (its id) or the queue, what happened, why, and for a
finished run its final reward. Built from the run folder's own files; never holds a URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.notify.events import EVENT_TITLES
from core.run.reached import step_reached
from core.run.status import read_status
from core.run.summary_file import read_summary
from core.util.text import clock

MAX_REASON_CHARS = 600


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def reward_line(run_dir: Path) -> str | None:
    """``final reward 187.3 (mean of the last 100 episodes; best 195.0)`` from summary.json."""
    summary = read_summary(run_dir)
    if summary is None:
        return None
    final = _num(summary.get("final_mean_reward"))
    if final is None:
        return "no episode ended, so there is no reward to report"
    window = summary.get("final_window")
    best = _num(summary.get("best_mean_reward"))
    extra = [f"mean of the last {window} episodes" if isinstance(window, int) else "mean of the last episodes"]
    if best is not None:
        extra.append(f"best {best:.4g}")
    line = f"final reward {final:.4g} ({'; '.join(extra)})"
    steps, wall = summary.get("timesteps"), _num(summary.get("wall_time_s"))
    if isinstance(steps, int) and wall:
        line += f" after {steps:,} steps in {clock(wall)}"
    return line


def run_message(run_dir: Path, event: str, reason: str | None = None) -> tuple[str, str]:
    """``(title, body)`` of a notification about a run."""
    run_dir = Path(run_dir)
    status = read_status(run_dir)
    run_id = run_dir.name
    reason = reason or status.exit_reason or status.error_message or "no reason recorded"
    reason = str(reason).strip().replace("\n", " ")[:MAX_REASON_CHARS]
    title = f"rlpanel: run {run_id} {EVENT_TITLES.get(event, event)}"
    lines = [f"Run {run_id} {EVENT_TITLES.get(event, event)}: {reason}"]
    if event == "finished":
        lines.append((reward_line(run_dir) or "its summary.json is missing, so its reward is not known").capitalize())
    elif event in ("stopped", "failed", "crashed"):
        step = step_reached(run_dir)
        if step:
            lines.append(f"It got to step {step:,}.")
    queue = status.queue
    if queue and queue.get("id"):
        lines.append(f"Queue {queue.get('id')}, job {queue.get('job')}.")
    return title, "\n".join(lines)


def queue_message(state: dict[str, Any]) -> tuple[str, str]:
    """``(title, body)`` when a queue ends: its state and one line over its jobs."""
    queue_id = state.get("id", "?")
    jobs = state.get("jobs") or []
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job.get("status", "?")] = counts.get(job.get("status", "?"), 0) + 1
    line = f"{len(jobs)} job{'s' if len(jobs) != 1 else ''}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    lines = [f"Queue {queue_id} {state.get('state', 'ended')}: {line}."]
    for job in jobs:
        if job.get("status") in ("failed", "crashed", "skipped"):
            why = str(job.get("reason") or "no reason recorded").replace("\n", " ")[:200]
            lines.append(f"{job.get('name')} ({job.get('run_id') or 'no run'}) {job.get('status')}: {why}")
    if state.get("error"):
        lines.append(f"The runner failed: {state['error']}")
    return f"rlpanel: queue {queue_id} {state.get('state', 'ended')}", "\n".join(lines)
