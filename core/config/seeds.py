"""The seeds of a group of runs, read from what a user types: ``5`` is seeds 0-4, ``3,7,11`` those three.

One reader for every place that takes seeds (``rlpanel train --seeds``, a queue plan job's ``seeds:``, the
Configure tab's Seeds field), so each says the same thing about bad input: the field, the value and the fix.
One run (``1``, or nothing) is no group: a launch as without seeds, the config's own ``runtime.seed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.config.errors import ConfigError, FieldIssue

if TYPE_CHECKING:  # the schema (pydantic) loads where a config is made, not with the window's first frame
    from core.config.schema import RunConfig

MAX_SEEDS = 100  # runs in one group: beyond that a typo (500 for 5,0,0) is likelier than a wish
MAX_SEED = 2**32 - 1  # runtime.seed's own limit (numpy's)
FORMS = "give a number of runs (5: seeds 0-4) or the seeds separated by commas (3,7,11)"

SeedsValue = str | int | Sequence[int] | None


def parse_seeds(value: SeedsValue, field: str = "seeds") -> list[int] | None:
    """The seeds ``value`` asks for, or None for a single run (``None``, ``""``, ``1``).

    A number N is seeds 0 to N-1; a list (``[3, 7, 11]`` or ``"3,7,11"``) is those seeds, in that order.
    ``ConfigError`` naming ``field`` for anything else: 0, a negative number, a duplicate, more than
    ``MAX_SEEDS`` runs, a seed past ``MAX_SEED``, words.
    """
    try:
        return _parse(value)
    except ValueError as exc:
        raise ConfigError([FieldIssue(field, str(exc))]) from None


def is_count(value: SeedsValue) -> bool:
    """Whether ``value`` is a number of runs (``5``, ``"5"``) rather than a list of seeds."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and "," not in value and value.strip().lstrip("+-").isdigit()


def seeds_text(seeds: Sequence[int]) -> str:
    """``seeds 0-4`` for a run of consecutive seeds from 0, else ``seeds 3, 7, 11``."""
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return f"seed{'s' if len(seeds) != 1 else ''} {', '.join(str(s) for s in seeds)}"


def with_seed(config: RunConfig, seed: int) -> RunConfig:
    """``config`` whose ``runtime.seed`` is ``seed`` (a seed in range needs no new validation)."""
    return config.model_copy(update={"runtime": config.runtime.model_copy(update={"seed": seed})})


def _parse(value: SeedsValue) -> list[int] | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value} is not a number of runs; {FORMS}")
    if is_count(value):
        count = int(value) if isinstance(value, int) else int(str(value).strip())
        if count < 1:
            raise ValueError(f"{count} runs cannot be launched; {FORMS}")
        if count > MAX_SEEDS:
            raise ValueError(f"{count} runs is more than {MAX_SEEDS} in one group; give at most {MAX_SEEDS}")
        return None if count == 1 else list(range(count))
    if isinstance(value, str):
        pieces = [p.strip() for p in value.strip().strip(",").split(",")]
        if not all(p.lstrip("+-").isdigit() for p in pieces):
            raise ValueError(f"{value.strip()[:40]!r} is not a list of seeds; {FORMS}")
        seeds = [int(p) for p in pieces]
    elif isinstance(value, Sequence):
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in value):
            raise ValueError(f"{list(value)[:10]} holds something other than whole numbers; {FORMS}")
        seeds = [int(s) for s in value]
    else:
        raise ValueError(f"{value!r} is not a number of runs or a list of seeds; {FORMS}")
    return _checked(seeds)


def _checked(seeds: list[int]) -> list[int]:
    if not seeds:
        raise ValueError(f"an empty list launches nothing; {FORMS}")
    bad = [s for s in seeds if not 0 <= s <= MAX_SEED]
    if bad:
        raise ValueError(f"seed {bad[0]} is out of range: a seed is a whole number from 0 to {MAX_SEED:,}")
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise ValueError(f"seed {repeated[0]} is given twice: each run of a group needs its own seed")
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"{len(seeds)} seeds is more than {MAX_SEEDS} in one group; give at most {MAX_SEEDS}")
    return seeds
