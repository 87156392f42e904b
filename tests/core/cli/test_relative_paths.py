"""Issue 11, point 1: a relative ``--runs-dir`` or ``RLPANEL_HOME`` is taken from the user's working folder.

The worker and the queue runner start in another folder; before the fix they resolved the
relative path there, and every run sat at ``starting`` until it read ``crashed``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.util.paths import absolute, user_home
from tests.training_helpers import lean_args, lean_plan, wait_for

pytestmark = pytest.mark.training


def rlpanel(cwd: Path, *args: str, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *lean_args(args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_absolute_and_user_home_resolve_against_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RLPANEL_HOME", "relhome")
    assert user_home() == tmp_path / "relhome"
    assert absolute("runs") == tmp_path / "runs"


def test_relative_runs_dir_trains_and_finishes(tmp_path):
    done = rlpanel(tmp_path, "train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "3",
                   "--runs-dir", "relruns", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["state"] == "finished", out
    assert Path(out["path"]).is_absolute() and Path(out["path"]).parent == tmp_path / "relruns"
    listed = json.loads(rlpanel(tmp_path, "runs", "--runs-dir", "relruns", "--json").stdout)
    assert [r["state"] for r in listed] == ["finished"]


def test_relative_rlpanel_home_trains_and_finishes(tmp_path):
    env = {**os.environ, "RLPANEL_HOME": "relhome"}
    done = rlpanel(tmp_path, "train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "3", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "finished"
    assert (tmp_path / "relhome" / "runs").is_dir()


def test_relative_runs_dir_runs_a_queue(tmp_path):
    (tmp_path / "plan.yaml").write_text(lean_plan("jobs:\n  - {name: base, algo: random, env: CartPole-v1, episodes: 2}\n"))
    done = rlpanel(tmp_path, "queue", "run", "plan.yaml", "--runs-dir", "relq")
    assert done.returncode == 0, done.stderr

    def ended():
        status = json.loads(rlpanel(tmp_path, "queue", "status", "--runs-dir", "relq", "--json").stdout)
        return status if status["state"] not in ("running", "cancelling") else None

    status = wait_for(ended, timeout=180, what="the queue to end", poll=1.0)
    assert status["state"] == "finished", status
    assert status["jobs"][0]["status"] == "finished"
