"""What a row of the Runs tab shows of a run: its columns (the ones a user reads first, first), the cells' text,
tooltips and sort keys (steps and rewards sort as numbers), and a failed run's error with the end of its log.
The panel (``app.runs.panel``) lists the runs and acts on them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from app.theme import state_color
from core.run import resume_words
from core.run.states import FAILED
from core.run.store import RunInfo
from core.telemetry.energy import co2_kg
from core.util.text import format_age

# what a user looks for first comes first: on a laptop (the tabs 676 px wide beside Configure at 1280x720) the name,
# state, steps and mean reward fit without a sideways scroll; the group, algorithm and env are also in the filter
COLUMNS = ["Run", "State", "Steps", "Mean reward", "Group", "Algo", "Env", "Energy", "Age", "Tags"]
RUN_COLUMN = COLUMNS.index("Run")
STATE_COLUMN = COLUMNS.index("State")
NUMBER_COLUMNS = tuple(COLUMNS.index(c) for c in ("Steps", "Mean reward", "Energy", "Age"))
ID_ROLE = Qt.ItemDataRole.UserRole
SORT_ROLE = Qt.ItemDataRole.UserRole + 1


def resumes_line(info: RunInfo) -> str:
    """``automatic resume: 1 automatic resume, after a GPU driver reset`` ("" for a run never resumed by itself)."""
    said = resume_words.summary(info.status.auto_resume)
    return f"automatic resume: {said}" if said else ""


def describe_failure(info: RunInfo, log_lines: list[str]) -> str:
    """What a user reads about a crashed or failed run: the error (a GPU driver reset's names the fix), its automatic
    resumes and the end of its log."""
    parts = [f"{info.id} {info.state}"]
    err = info.error or {}
    if err.get("message"):
        parts.append(f"error: {err['message']}")
    if resumed := resumes_line(info):
        parts.append(resumed)
    if err.get("traceback"):
        parts.append(str(err["traceback"]).rstrip())
    if log_lines:
        parts.append("--- last lines of worker.log ---")
        parts += log_lines
    return "\n".join(parts)


class RunItem(QTreeWidgetItem):
    """A row that sorts by each column's value (steps and rewards as numbers), not its text."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        col = self.treeWidget().sortColumn() if self.treeWidget() else 0
        mine, theirs = self.data(col, SORT_ROLE), other.data(col, SORT_ROLE)
        if mine is None or theirs is None or type(mine) is not type(theirs):
            return self.text(col).lower() < other.text(col).lower()
        return bool(mine < theirs)


def energy_text(kwh: float | None) -> str:
    """``12.3 Wh`` under a kWh, else ``1.23 kWh``; empty when unknown."""
    if kwh is None:
        return ""
    return f"{kwh * 1000:.3g} Wh" if kwh < 1 else f"{kwh:,.2f} kWh"


def group_text(info: RunInfo) -> tuple[str, str, str]:
    """The Group cell of a run: ``night-ppo (x5), seed 3``, its tooltip and its sort key ("" for a run launched alone)."""
    group = info.status.group or {}
    if not group.get("id"):
        return "", "", ""
    seed, size = group.get("seed"), group.get("size")
    text = f"{group.get('name') or group['id']}" + (f" (x{size})" if size else "") + f", seed {seed}"
    tip = f"group {group['id']}: {size or '?'} runs launched together; this one is seed {seed}"
    return text, tip, f"{group['id']}/{seed if isinstance(seed, int) else 0:010d}"  # a group together, in seed order


def run_row(info: RunInfo, now: float, grid_g_per_kwh: float | None = None) -> RunItem:
    reward = "" if info.mean_reward is None else f"{info.mean_reward:.2f}"
    steps = info.steps_text()
    started = info.started_at or info.created_at or now
    label = info.label  # the one rule (core.run.names): display name, else config name, else id
    group, group_tip, group_key = group_text(info)
    item = RunItem([label, info.state, steps, reward, group, info.algo, info.env, energy_text(info.energy_kwh),
                    format_age(now - started), " ".join(info.tags)])
    item.setData(0, ID_ROLE, info.id)
    if group_tip:
        item.setToolTip(COLUMNS.index("Group"), group_tip)
    sort_keys = [label.lower(), info.state, float(info.steps),
                 float("-inf") if info.mean_reward is None else float(info.mean_reward), group_key, info.algo.lower(),
                 info.env.lower(), float("-inf") if info.energy_kwh is None else float(info.energy_kwh), -float(started),
                 " ".join(info.tags).lower()]
    co2 = co2_kg(info.energy_kwh, grid_g_per_kwh)
    if info.energy_kwh is not None:
        item.setToolTip(COLUMNS.index("Energy"), "GPU energy over the run (NVML)" + (
            f"\nCO2 estimate {co2 * 1000:,.1f} g at {grid_g_per_kwh:g} g/kWh" if co2 is not None and grid_g_per_kwh else
            "\nset the grid's g CO2/kWh in the Results tab for a CO2 estimate"))
    for col, key in enumerate(sort_keys):
        item.setData(col, SORT_ROLE, key)
    item.setForeground(STATE_COLUMN, state_color(info.state))
    tip = ([label] if label != info.id else []) + [info.id] + ([f"note: {info.note}"] if info.note else [])
    item.setToolTip(0, "\n".join(tip))  # the whole name too: a long one is elided in its column
    if info.broken:
        item.setToolTip(0, f"{info.id}\ncannot be read: {info.broken}")
        item.setToolTip(STATE_COLUMN, f"cannot be read: {info.broken}")
    elif info.state in FAILED and info.error:
        item.setToolTip(STATE_COLUMN, str(info.error.get("message", "")))
    elif info.pause_reason:
        item.setToolTip(STATE_COLUMN, f"paused: {info.pause_reason}")
    elif info.stall_note:
        item.setToolTip(STATE_COLUMN, f"stalled: {info.stall_note}")
    for col in NUMBER_COLUMNS:
        item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item
