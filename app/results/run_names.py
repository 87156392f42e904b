"""What the Results tab calls a run: in its runs list (``run_label``) and in the baseline combo (``baseline_texts``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from core.run.store import RunInfo


def started_text(info: RunInfo) -> str:
    """``11-22 04:48``: when the run started (else was made); empty when neither is known."""
    when = info.started_at or info.created_at
    return datetime.fromtimestamp(when).strftime("%m-%d %H:%M") if when else ""


def run_label(info: RunInfo) -> str:
    """``11-22 04:48  night-ppo · PPO CartPole-v1`` (and the state when the run did not finish)."""
    text = f"{started_text(info)}  {info.label}  ·  {info.algo} {info.env}"
    return text if info.state == "finished" else f"{text}  ({info.state})"


BASELINE_NAME_PX = 200  # a longer run name is cut at its end in the baseline combo (whole in the item's tooltip)


def baseline_texts(infos: list[RunInfo], elide: Callable[[str], str] = lambda name: name) -> list[str]:
    """What the baseline combo calls each run: ``base (random, CartPole-v1)``, the name ``elide``d.

    A run without a name goes by its start (its id, cut to fit, read ``20261128-185…-cartpole-v1`` for
    every run of a day); a run of a group of seeds by its seed (the runs of a group share their name: a group of
    three read ``ppo2`` three times); runs that still read alike get their start, then their id.
    """
    def text(info: RunInfo, *more: str) -> str:
        named = info.label != info.id or not started_text(info)
        name = elide(info.label) if named else f"run of {started_text(info)}"
        seed = (info.status.group or {}).get("seed") if (info.status.group or {}).get("id") else None
        return f"{name}{f', seed {seed}' if seed is not None else ''} ({', '.join([info.algo, info.env, *more])})"

    texts = [text(i) for i in infos]
    for extra in (lambda i: [started_text(i)], lambda i: [started_text(i), i.id]):
        alike = {t for t in texts if texts.count(t) > 1}
        texts = [text(i, *extra(i)) if t in alike else t for i, t in zip(infos, texts, strict=True)]
    return texts
