"""The deepest path a run writes under its runs folder, and the launch's refusal when Windows would not take it.

Without long paths (``core.util.long_paths``), Windows refuses a path of 260 characters or more with a misleading
``FileNotFoundError``: a run in a deep runs folder (a synced Documents folder, a long user name) would fail at its
first TensorBoard file or checkpoint. ``core.launch.start.start_problem`` asks ``path_problem`` before every launch
(the window's Launch, ``rlpanel train``, the queue and sweep runners, a restart), so such a run is refused before
its folder exists, with the fix. The check counts this launch's own run id, its name included: a runs folder that
takes short names may refuse a long one, and the message then says that a shorter name also fixes it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.run.store import ID_TRIES, run_id_base
from core.util.long_paths import FIX, MAX_PATH, long_paths_enabled
from core.util.paths import absolute
from core.util.registry import Registry, winreg_reader
from core.util.text import safe_name

if TYPE_CHECKING:
    from core.config.schema import RunConfig

# The longest path inside a run folder, its leading separator included, with margin. Found from the real names
# (tests/core/run/test_path_length.py checks each against it): SB3's TensorBoard file
# tb/events.out.tfevents.<10-digit time>.<host>.<pid>.<n> is 63 with a 15-character host name (Windows' computer
# name limit) and a 10-digit pid; checkpoints.superseded/step_<12 digits>_vecnormalize.pkl 57; a checkpoint's
# .tmp- name 51; a manifest's temp file (.step_<12>.json.<8>.tmp) 48. 80 leaves room for a longer DNS host name
# or a new file. The deepest folder (checkpoints.superseded, 22) stays far within CreateDirectory's 248.
DEEPEST_FILE_CHARS = 80
LONGEST_PATH_CHARS = MAX_PATH - 1  # MAX_PATH counts the terminating NUL
COLLISION_CHARS = len(f"-{ID_TRIES}")  # RunStore.create's suffix when the id is taken (two launches in a second)

# Seams: the system and registry the check reads (tests make Windows happen by setting these)
platform: str = sys.platform
registry: Registry = winreg_reader


def run_id_chars(config: RunConfig, id_suffix: str = "") -> int:
    """The longest id a new run of ``config`` can get: its base id and the suffix of a taken id."""
    return len(run_id_base(config, id_suffix)) + COLLISION_CHARS


def deepest_path_chars(runs_folder: Path, id_chars: int) -> int:
    """The length of the deepest path a run with an id of ``id_chars`` writes in ``runs_folder``."""
    return len(str(absolute(runs_folder))) + 1 + id_chars + DEEPEST_FILE_CHARS


def path_problem(runs_folder: Path, config: RunConfig, id_suffix: str = "", run_id: str | None = None) -> str | None:
    """Why a run of ``config`` must not start in ``runs_folder``: on Windows without long paths, its deepest path
    would pass 259 characters. None with long paths on, off Windows, or where the registry cannot be read.

    ``run_id``: the folder's name where it exists already (a restart); else the longest id ``config`` can get.
    """
    if long_paths_enabled(registry, platform) is not False:
        return None
    folder = absolute(runs_folder)
    id_chars = len(run_id) if run_id else run_id_chars(config, id_suffix)
    deepest = deepest_path_chars(folder, id_chars)
    if deepest <= LONGEST_PATH_CHARS:
        return None
    room = LONGEST_PATH_CHARS - (deepest - len(str(folder)))
    message = (f"the runs folder {folder} ({len(str(folder))} characters) is too deep for Windows without long paths "
               f"(LongPathsEnabled is off): a run's deepest file there would be {deepest} characters, past Windows' "
               f"limit of {LONGEST_PATH_CHARS}; {FIX} (at most {room} characters for this run)")
    name = safe_name(config.name, 32) if config.name and not run_id else ""  # the part of the id the user typed
    over = deepest - LONGEST_PATH_CHARS
    if name and over <= len(name) + 1:
        shorter = f"at most {len(name) - over} characters would fit" if len(name) > over else "leave it empty"
        message += f"; or give the run a shorter name: {config.name!r} adds {len(name) + 1} to its id ({shorter})"
    return message
