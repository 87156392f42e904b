"""A preset picked for an env that its algorithm cannot train.

A preset names an algorithm (laptop-8gb: SAC) and usually no env, so picked over an env whose actions that algorithm
cannot take (CartPole-v1's discrete ones) it makes a config no launch accepts. The window keeps the algorithm the form
showed and applies the rest of the preset, with a note that says so (``keep_algorithm``, ``kept_note``); the command
line, where the algorithm came from the preset and not from the user, refuses with the flag that fixes it
(``core.cli.common.env_issues``). Both give the same reason (``clash``).
"""

from __future__ import annotations

from collections.abc import Iterable

from core.config.algorithms.registry import ALGORITHMS
from core.config.spaces import trainers


def clash(preset: str, algo: str, env_label: str, action_kind: str) -> str | None:
    """Why preset ``preset``'s algorithm ``algo`` cannot train the env, or None when it can (a baseline always can
    as far as this is concerned: ``check_spaces`` has its own words for the constant one)."""
    spec = ALGORITHMS.get(algo)
    if spec is None or spec.takes(action_kind):
        return None
    return f"{preset} sets {spec.name}, which needs {spec.action_need}; {env_label} has a {action_kind} one"


def keep_algorithm(action_kind: str, preferred: Iterable[str | None]) -> str | None:
    """The algorithm to train the env with instead: the first of ``preferred`` (the one the form showed, then the
    preset's own) that is installed and takes these actions, else the first installed one that does (None: none)."""
    able = trainers(action_kind)
    return next((algo for algo in preferred if algo in able), able[0] if able else None)


def kept_note(reason: str, preset: str, kept: str, shown: str | None) -> str:
    """What the window says it did: ``laptop-8gb sets SAC, ...: kept PPO; the rest of laptop-8gb applies``."""
    did = f"kept {kept}" if kept == shown else f"{kept} instead"
    return f"{reason}: {did}; the rest of {preset} applies"
