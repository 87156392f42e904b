"""Following a run in the terminal: the progress line of ``rlpanel train``, ``resume`` and ``restart``.

The steps shown are those of the newest record of any kind (episodes and training records come
between progress records, which are written at most once a second), the speed and time left come
from ``core.run.eta`` (the speed from the first progress record on, as the Speed chart draws it, over the last
minute once measured; the time left once 15 s are measured; neither once the run is not running: "stopping",
"finished" take their place), and the line is printed once more when
the run ends, so the last line says where it ended.

A group of seeds (``train --seeds``) is followed more quietly: a line as each run ends, and how many run,
ended and failed when that changes; Ctrl-C asks every run of the group to stop.

A run that crashed or failed with an automatic resume planned (``runtime.auto_resume``) has not ended: the line
says when it resumes and the following goes on through the resume to the run's real end (issue 44: ``train``
said "crashed" and exited 1 while the run went on to finish). Ctrl-C while the resume is awaited leaves it to
come; the caller tells that end apart (``Followed.resumes_at``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from core.launch import auto_resume
from core.launch.control import request_stop
from core.run.episodes import REWARD_WINDOW, EpisodeGroup, group_of, last_window, weighted_mean
from core.run.eta import SpeedEstimate, running_rate, time_left
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.run.states import FAILED, TERMINAL
from core.run.status import RunStatus, read_status
from core.util.jsonl import JsonlReader

BAR_WIDTH = 24


@dataclass
class RunProgress:
    """What the records read so far say: the newest step, the total, the speed, the last episodes."""

    total: int = 0
    step: int = 0
    unit: str = "steps"
    episodes: int = 0
    speed: SpeedEstimate = field(default_factory=SpeedEstimate)
    groups: list[EpisodeGroup] = field(default_factory=list)  # the newest episode records, single or aggregated
    span: list[tuple[int, float]] = field(default_factory=list)  # this attempt's first and last progress (step, t)

    def add(self, rec: dict[str, Any]) -> None:
        kind = rec.get("kind")
        if kind == "attempt":  # a resume from a checkpoint: its step, and a speed measured afresh
            self.step = rec.get("step") or 0
            self.speed.reset()
            self.span.clear()
            return
        if kind == "progress":
            self.total = rec.get("total") or self.total
            point = (rec["step"], rec.get("t") or time.time())
            self.speed.update(*point, rec.get("fps"))
            self.span = [self.span[0], point] if self.span else [point]
            if rec.get("episodes_total"):  # a baseline counts episodes, not steps
                self.step, self.total, self.unit = rec["episodes"], rec["episodes_total"], "episodes"
                return
        elif (group := group_of(rec)) is not None:
            self.groups.append(group)
            self.episodes += group.count
            del self.groups[:-REWARD_WINDOW]  # each holds at least one of the last REWARD_WINDOW episodes
        if self.unit == "steps" and isinstance(rec.get("step"), int):
            self.step = max(self.step, rec["step"])

    def average(self, train_time_s: float | None = None) -> float | None:
        """The run's steps over its training time ``train_time_s`` (what ``summary.json``'s ``steps_per_s`` says: the
        first rollout included, where SBX compiles, which the progress records start after); without it, this
        attempt's steps per second from its first to its last progress record (None: neither is known)."""
        if train_time_s and self.step:
            return self.step / train_time_s
        if len(self.span) < 2 or self.span[1][1] <= self.span[0][1]:
            return None
        (step0, t0), (step1, t1) = self.span
        return (step1 - step0) / (t1 - t0)

    def line(self, state: str, now: float, train_time_s: float | None = None) -> str:
        """``[####....] 16,384/20,480 steps  1,234 steps/s  0:03 left, done at 02:04  reward 21.50 (80 ep)``.

        ``train_time_s``: the run's training time (its status): an ended run with fewer than two progress records
        (all of it in its first second) says its steps over that time."""
        mean = weighted_mean(last_window(self.groups, REWARD_WINDOW))
        shown = max(self.step, self.total)  # an update ending with episodes (ARS) passes the total: never "x/fewer"
        filled = int(BAR_WIDTH * self.step / shown) if shown else 0
        parts = [f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.step:,}/{shown:,} {self.unit}"]
        steps = self.unit == "steps"
        rate = running_rate(self.speed, state) if steps else None
        if rate is not None:
            parts.append(f"{rate:,.0f} steps/s")
        elif steps and state in TERMINAL and (average := self.average(train_time_s)) is not None:
            parts.append(f"{average:,.0f} steps/s on average")  # a run too short to measure itself says its mean
        left = time_left(self.speed, self.total - self.step, state, now) if steps else None
        if state == "paused":
            left = "PAUSED (GPU guard)"
        elif state == "stalled":
            left = "STALLED (no step: see rlpanel runs ID)"
        parts.append(left or state)
        parts.append(f"reward {'-' if mean is None else f'{mean:.2f}'} ({self.episodes:,} ep)")
        return "  ".join(parts)


class Followed(NamedTuple):
    """How a followed run was left: its state and why; ``resumes_at`` when it crashed or failed and its automatic
    resume is planned for then (the command was left before it: Ctrl-C)."""

    state: str
    reason: str
    resumes_at: float | None = None


def _reason(status: RunStatus) -> str:
    return status.exit_reason or status.error_message or status.state


def awaited(run_dir: Path, status: RunStatus) -> str | None:
    """What a crashed or failed run still waits for (its planned resume, its supervisor's decision), else None."""
    return auto_resume.awaited(run_dir, status) if status.state in FAILED else None


def _left_to_resume(status: RunStatus, why: str) -> Followed:
    return Followed(status.state, f"{_reason(status)}; {why}", auto_resume.pending(status))


def follow(run_dir: Path, poll_s: float = 0.5, total: int = 0) -> Followed:
    """Show a progress line until the run ends (through its automatic resumes); Ctrl-C asks for a graceful stop, or
    leaves a run that awaits its automatic resume to it. ``total``: the steps the run trains, until its progress
    records say it."""
    reader = JsonlReader(RunDir(run_dir).metrics)
    tty = sys.stderr.isatty()
    progress = RunProgress(total=total)
    said: set[tuple[Any, ...]] = set()  # the events printed: each once, however often the file is read
    last_print = 0.0
    interrupted = False
    printed = ""
    waiting: str | None = None  # what a crashed or failed run awaits (its resume), as last said
    status: RunStatus | None = None
    while True:
        try:
            restarts = reader.restarts
            new = well_formed_only(reader.read_new())
            if reader.restarts != restarts:  # a resume rewrote the file without the records it moved aside: read
                progress = RunProgress(total=progress.total)  # it as new, or every episode counts twice
            for rec in new:
                progress.add(rec)
                if rec.get("kind") == "event" and (rec.get("level") in ("warning", "error") or rec.get("code")):
                    key = (rec.get("t"), rec.get("level"), rec.get("message"))
                    if key not in said:
                        said.add(key)
                        print(("\r" if tty else "") + f"{rec['level']}: {rec['message']}", file=sys.stderr)
            status = read_status(run_dir)
            state = status.state
            if interrupted and state == "running":  # the stop is asked for: its speed and time left are not
                state = "stopping"
            now = time.monotonic()
            awaits = awaited(run_dir, status)
            ended = state in TERMINAL and awaits is None
            if progress.step and (tty or ended or now - last_print >= 5):
                line = progress.line(state, time.time(), status.train_time_s)
                if line != printed:
                    print(("\r" + line + "   ") if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)
                    last_print, printed = now, line
            if awaits is not None and awaits != waiting:
                hint = " (Ctrl-C leaves it to resume by itself)" if auto_resume.pending(status) is not None else ""
                print(("\n" if tty else "") + f"{run_dir.name} {state}: {_reason(status)}; {awaits}: following it{hint}",
                      file=sys.stderr, flush=True)
            waiting = awaits
            if ended:
                if tty:
                    print(file=sys.stderr)
                return Followed(state, _reason(status))
            time.sleep(poll_s)
        except KeyboardInterrupt:
            if status is not None and waiting is not None and auto_resume.pending(status) is not None:
                print(f"\nleaving {run_dir.name} to its automatic resume", file=sys.stderr)
                return _left_to_resume(status, waiting)
            if interrupted:
                print(f"\nleaving {run_dir.name} running; stop it with: rlpanel stop {run_dir.name}", file=sys.stderr)
                return Followed("running", "detached by a second Ctrl-C")
            interrupted = True
            request_stop(run_dir, "Ctrl-C")
            print("\nstopping gracefully (checkpoint first); Ctrl-C again leaves the run going", file=sys.stderr)


def follow_group(run_dirs: list[Path], seeds: list[int], poll_s: float = 1.0) -> list[Followed]:
    """Wait until every run of a group has ended (through their automatic resumes), saying each end; returns how
    each run was left, in order.

    Ctrl-C asks all of them for a graceful stop; a second Ctrl-C leaves them going (state ``running``, or the
    crashed state with ``resumes_at`` for a run that awaits its automatic resume).
    """
    ends: dict[Path, Followed] = {}
    seen: dict[Path, RunStatus] = {}
    waits: dict[Path, str] = {}  # what each crashed or failed run awaits, as last said
    interrupted = False
    said = ""
    while len(ends) < len(run_dirs):
        try:
            counts: dict[str, int] = {}
            for run_dir, seed in zip(run_dirs, seeds, strict=True):
                if run_dir in ends:
                    counts[ends[run_dir][0]] = counts.get(ends[run_dir][0], 0) + 1
                    continue
                status = seen[run_dir] = read_status(run_dir)
                counts[status.state] = counts.get(status.state, 0) + 1
                awaits = awaited(run_dir, status)
                if awaits is not None and awaits != waits.get(run_dir):
                    print(f"{run_dir.name} (seed {seed}): {status.state}: {_reason(status)}; {awaits}", file=sys.stderr,
                          flush=True)
                if awaits is None:
                    waits.pop(run_dir, None)
                else:
                    waits[run_dir] = awaits
                if status.state in TERMINAL and awaits is None:
                    ends[run_dir] = Followed(status.state, _reason(status))
                    print(f"{run_dir.name} (seed {seed}): {status.state}: {ends[run_dir][1]}", file=sys.stderr, flush=True)
            line = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
            if line != said:
                print(f"group: {line}", file=sys.stderr, flush=True)
                said = line
            if len(ends) < len(run_dirs):
                time.sleep(poll_s)
        except KeyboardInterrupt:
            if interrupted:
                left = [d.name for d in run_dirs if d not in ends]
                print(f"\nleaving {len(left)} runs going; stop one with: rlpanel stop RUN_ID", file=sys.stderr)
                return [ends.get(d) or _left(seen.get(d), waits.get(d)) for d in run_dirs]
            interrupted = True
            for run_dir in run_dirs:
                if run_dir in ends:
                    continue
                to_resume = _left(seen.get(run_dir), waits.get(run_dir))
                if to_resume.resumes_at is not None:  # nothing runs to stop: it is left to its resume
                    ends[run_dir] = to_resume
                else:
                    request_stop(run_dir, "Ctrl-C")
            print("\nstopping the group's runs gracefully (checkpoints first; runs awaiting their automatic resume are "
                  "left to it); Ctrl-C again leaves them going", file=sys.stderr)
    return [ends[d] for d in run_dirs]


def _left(status: RunStatus | None, waiting: str | None) -> Followed:
    """How a run of a group not yet ended is left by a second Ctrl-C."""
    if status is not None and waiting is not None and auto_resume.pending(status) is not None:
        return _left_to_resume(status, waiting)
    return Followed("running", "detached by a second Ctrl-C")
