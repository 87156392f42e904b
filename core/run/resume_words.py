"""A run's automatic resumes in words (``core.launch.auto_resume`` decides them): what they followed and how many, for
the Runs tab, ``rlpanel runs ID`` and the morning report. Light on purpose: the window's first frame lists runs
without loading the config schema that deciding needs."""

from __future__ import annotations

from typing import Any

# what ended an attempt, in the words of a resumed run's history ("1 automatic resume, after a GPU driver reset")
LABELS = {"gpu_reset": "a GPU driver reset", "gpu_oom": "out of GPU memory", "host_oom": "out of memory",
          "killed": "a kill", "cuda": "a CUDA error", "env": "an env's error", "error": "an error",
          "crashed": "a crash"}


def causes(auto: dict[str, Any] | None) -> str:
    """What the automatic resumes followed, in order without repeats: ``after a GPU driver reset, a crash`` ("" when
    none was resumed)."""
    auto = auto or {}
    if not auto.get("count"):
        return ""
    history = [h for h in (auto.get("history") or []) if isinstance(h, dict)]
    resumed = history[:-1] if auto.get("gave_up") else history  # the last attempt's end was not resumed
    words = list(dict.fromkeys(LABELS.get(str(h.get("kind")), "a crash") for h in resumed))
    return f"after {', '.join(words)}" if words else ""


def summary(auto: dict[str, Any] | None) -> str:
    """``2 automatic resumes, after a GPU driver reset`` / ``not resumed automatically: ...`` for the morning report
    ("" when none)."""
    if not auto:
        return ""
    count = int(auto.get("count") or 0)
    after = causes(auto)
    parts = [f"{count} automatic resume{'s' if count != 1 else ''}" + (f", {after}" if after else "")] if count else []
    if auto.get("gave_up"):
        parts.append(f"not resumed automatically: {auto['gave_up']}")
    return "; ".join(parts)
