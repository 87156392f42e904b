"""``rlpanel tune`` refuses what it cannot tune in one line naming the fix, before any probe or table."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO


def _tune(*args):
    return subprocess.run([sys.executable, "-m", "core.cli", "tune", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize(("args", "words"), [
    (["--algo", "SAC", "--env", "CartPole-v1"], ["algo", "continuous", "use PPO, A2C, DQN"]),
    (["--algo", "random", "--env", "CartPole-v1"], ["baseline", "nothing to tune"]),
    (["--algo", "PPO", "--env", "NoSuchEnv-v9"], ["env.id", "NoSuchEnv-v9"]),
])
def test_refusals_are_one_line_and_no_table(args, words):
    done = _tune(*args, "--budget-s", "10")
    assert done.returncode == 2
    assert done.stdout == ""  # no table was started
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("rlpanel tune:") and all(w in line for w in words), line
