"""Each env's baseline run, chosen one way for every table that compares with one.

The morning report and ``rlpanel export --group-by`` both compare a run (or a group of seeds) with its env's
baseline: the run the user named for that env, else the newest finished random or constant run of that env in the
runs folder. Chosen in two places, they disagreed: ``export --group-by group`` without ``--baseline`` compared with
nothing while ``report`` picked the random run (issue 42).
"""

from __future__ import annotations

from pathlib import Path

from core.config.algorithms.baselines import BASELINES
from core.run.store import RunInfo, run_info


def env_baselines(every: list[RunInfo], envs: list[str], named: list[Path] | None = None) -> dict[str, Path | None]:
    """Each env id -> its baseline run: the one of ``named`` of that env (the user's choice), else the
    newest finished random or constant run of that env among ``every`` run of the store (None: it has
    none). ValueError when two named runs share an env."""
    chosen: dict[str, Path] = {}
    for path in named or []:
        env = run_info(path).env
        if env in chosen:
            raise ValueError(f"{chosen[env].name} and {path.name} are both baselines of {env}: name one run per env")
        chosen[env] = path
    out: dict[str, Path | None] = {}
    finished: list[RunInfo] = []
    if any(env not in chosen for env in envs):
        finished = sorted((i for i in every if i.algo in BASELINES and i.state == "finished" and not i.broken),
                          key=lambda i: i.started_at or i.created_at or 0)
    for env in envs:
        own = [i for i in finished if i.env == env]
        out[env] = chosen.get(env) or (own[-1].path if own else None)
    return out
