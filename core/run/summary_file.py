"""summary.json as its readers take it: the worker's figures with their types, or None (then read the records).

The worker writes summary.json last; a damaged, hand-edited or foreign file may hold anything. A reader that took
``"timesteps": "lots"`` as no number showed 0 steps and 0 episodes while metrics.jsonl was intact (issue 44), so a
summary whose figures have the wrong type is treated as a missing one: every reader falls back to the records, as
it does for a run that wrote no summary. A key an older summary lacks is fine (its readers complete it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.util.files import read_json

# what each figure a reader takes must be: "int", "number" (int or float), "dict", "str"; "?" also allows null
FIELDS = {"timesteps": "int", "episodes": "int", "final_window": "int", "final_mean_reward": "number?",
          "final_std_reward": "number?", "best_mean_reward": "number?", "last_eval_mean_reward": "number?",
          "last_eval_std_reward": "number?", "last_eval_episodes": "int?", "all_mean_reward": "number?",
          "all_std_reward": "number?", "final_measures": "dict?", "all_measures": "dict?", "wall_time_s": "number?",
          "steps_per_s": "number?", "energy_kwh": "number?", "time_split": "dict?", "state": "str?"}


def _fits(value: Any, kind: str) -> bool:
    if kind.endswith("?"):
        if value is None:
            return True
        kind = kind[:-1]
    if isinstance(value, bool):
        return False
    return isinstance(value, {"int": int, "number": int | float, "dict": dict, "str": str}[kind])


def summary_problem(data: Any) -> str | None:
    """Why ``data`` (summary.json as parsed) is not a summary to take figures from, or None."""
    if not isinstance(data, dict):
        return "summary.json is not a JSON object"
    wrong = [key for key, kind in FIELDS.items() if key in data and not _fits(data[key], kind)]
    if wrong:
        return "summary.json has figures of the wrong type (" + ", ".join(wrong[:4]) + ")"
    return None


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """The run's summary.json when it is whole and typed; None when missing, unreadable or damaged."""
    data = read_json(RunDir(run_dir).summary, default=None)
    return data if summary_problem(data) is None else None
