"""A queue survives a reboot: ``queue run --survive-reboot`` registers the start-up entry, the entry's own
command brings a dead runner back, and the runner removes the entry when the queue ends."""

from __future__ import annotations

import os
import subprocess

import psutil
import pytest

from core.queue.state import QueueFolder, load_queue, read_queue
from tests.core.queue.test_autostart import desktop_values, parse_exec
from tests.core.queue.test_queue import plan_file, plan_over
from tests.training_helpers import cli, wait_for

PLAN = """
parallel: 1
jobs:
  - {name: one, algo: random, env: CartPole-v1, episodes: 30}
  - {name: two, algo: random, env: CartPole-v1, episodes: 5}
"""


@pytest.mark.training
def test_a_queue_whose_runner_died_is_resumed_by_its_startup_entry_which_goes_at_the_end(tmp_path, runs_dir, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # the CLI's children read it: never the real ~/.config
    started = cli("queue", "run", str(plan_file(tmp_path, PLAN)), "--runs-dir", str(runs_dir), "--survive-reboot")
    assert started.returncode == 0, started.stderr
    [entry] = (tmp_path / "xdg" / "autostart").iterdir()
    assert f"resumes after a restart: the autostart entry {entry}" in started.stdout
    assert f"resumes after a restart: the autostart entry {entry}" in cli("queue", "status", "--runs-dir", str(runs_dir)).stdout

    state = wait_for(lambda: (s := read_queue(runs_dir)) and s.runner and s, what="the runner to hold the queue")
    psutil.Process(state.runner["pid"]).kill()  # the restart: the runner is gone (its job's worker goes on here)
    wait_for(lambda: read_queue(runs_dir).state == "crashed", timeout=30, what="the runner to read as crashed")

    values = desktop_values(entry)  # what the desktop runs at log-in, as it would run it
    logon = subprocess.run(parse_exec(values["Exec"]), cwd=values["Path"], env=dict(os.environ), capture_output=True,
                           text=True, timeout=120)
    assert logon.returncode == 0 and f"resumed queue {state.id}: its runner was gone" in logon.stdout, logon.stderr
    again = cli("queue", "resume", "--runs-dir", str(runs_dir))  # idempotent: nothing is started twice
    assert again.returncode == 0 and "nothing to resume" in again.stdout, again.stdout
    if "is running (its runner lives)" in again.stdout:  # (on a busy machine the short plan may have ended already)
        assert entry.exists(), "the runner lives: the entry stays for a second restart"

    ended = wait_for(lambda: plan_over(runs_dir), timeout=240, what="the plan to end")
    assert ended.state == "finished" and ended.restarts == 1 and [j.status for j in ended.jobs] == ["finished", "finished"]
    removed = f"the queue has ended: removed its start-up entry ({entry})"
    # the runner removes the entry, then writes its state, then the log line: a read between them missed the line
    wait_for(lambda: not entry.exists() and load_queue(runs_dir).survive_reboot is None
             and removed in QueueFolder(runs_dir).runner_log.read_text(), timeout=30,
             what="the runner to remove the start-up entry and say so")
    log = QueueFolder(runs_dir).runner_log.read_text()
    assert "rlpanel queue resume" in log and f"resumed queue {state.id}" in log
    assert removed in log
    after = cli("queue", "resume", "--runs-dir", str(runs_dir))
    assert after.returncode == 0 and f"queue {state.id} has ended (finished): nothing to resume" in after.stdout
