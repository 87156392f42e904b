"""Issue 11, point 3: two ``rlpanel queue run`` at once on one runs folder: one starts, the other
is refused in one clear line; never "started" for a plan that will not run."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from core.queue.state import read_queue
from tests.training_helpers import cli, wait_for

PLAN = """
parallel: 1
jobs:
  - {{name: {name}, algo: random, env: CartPole-v1, episodes: 2}}
"""


@pytest.mark.parametrize("attempt", range(3))
def test_two_queue_runs_at_once_start_one_and_refuse_the_other(tmp_path, runs_dir, attempt):
    plans = []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(PLAN.format(name=name))
        plans.append(path)
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda p: cli("queue", "run", str(p), "--runs-dir", str(runs_dir)), plans))
    started = [i for i, d in enumerate(done) if d.returncode == 0]
    refused = [i for i, d in enumerate(done) if d.returncode != 0]
    assert len(started) == 1 and len(refused) == 1, [(d.returncode, d.stdout, d.stderr) for d in done]
    assert "started queue" in done[started[0]].stdout
    message = done[refused[0]].stderr
    assert "already running" in message and "this plan was not started" in message and "Traceback" not in message
    assert len(message.strip().splitlines()) == 1
    state = wait_for(lambda: (s := read_queue(runs_dir)) and s.state == "finished" and s, timeout=120, what="the queue")
    assert [j.name for j in state.jobs] == [("first", "second")[started[0]]]
