"""The OS-held lock (core/util/locks.py): a busy lock is one clear error; a holder killed with
kill -9 leaves no stale lock behind."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.util.locks import LockBusy, held_briefly
from tests.training_helpers import wait_for

HOLDER = ("import sys, time\nfrom filelock import FileLock\nlock = FileLock(sys.argv[1], is_singleton=False)\n"
          "lock.acquire()\nprint('held', flush=True)\ntime.sleep(120)\n")


def test_a_held_lock_is_busy_until_its_holder_is_killed(tmp_path):
    path = tmp_path / "x.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockBusy, match="another rlpanel command has held the queue"), \
                held_briefly(path, timeout_s=0.3, what="the queue"):
            pass
        holder.kill()
        holder.wait()

        def free() -> bool:
            try:
                with held_briefly(path, timeout_s=0.1):
                    return True
            except LockBusy:
                return False

        wait_for(free, timeout=10, what="the lock to be free")
    finally:
        holder.kill()
        holder.wait()
