"""Which algorithms can train here: SB3's always, sb3-contrib's only where ``sb3_contrib`` is installed.

The config schema holds every algorithm's table either way (a config written on another machine
still reads); the window lists only the installed ones and a launch of a missing one is refused
with the fix (``core.config.spaces.check_spaces``). Found with ``importlib.util.find_spec``:
nothing is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.config.field_index import field_index
from core.util.imports import installed

if TYPE_CHECKING:
    from core.config.algorithms.spec import AlgoSpec

CONTRIB_FIX = 'pip install "rlpanel[contrib]"'


def contrib_installed() -> bool:
    """Whether sb3-contrib can be imported (without importing it: it would load torch)."""
    return installed("sb3_contrib")


def is_installed(spec: AlgoSpec) -> bool:
    return not spec.contrib or contrib_installed()


def installed_algorithms() -> list[str]:
    """The algorithms this machine trains, in table order (the registry's, from the shipped field index: the window lists
    them without loading the algorithms' tables)."""
    have = contrib_installed()
    return [algo.name for algo in field_index().algorithms if have or not algo.contrib]


def missing_algorithms() -> list[str]:
    """sb3-contrib's algorithms when it is not installed (else none)."""
    return [] if contrib_installed() else [algo.name for algo in field_index().algorithms if algo.contrib]


def missing_text(algo: str) -> str:
    """Why ``algo`` cannot train here, and the fix."""
    return f"{algo} comes from sb3-contrib, which is not installed here: {CONTRIB_FIX}"
