"""Issue 44, item 4: ``rlpanel train`` (and ``--seeds``) follows a run that crashed with an automatic resume planned
through the resume to its end, and a Ctrl-C while the resume is awaited exits 3, naming when it resumes, apart from
a crash nothing resumes (1). Real run folders; their statuses move as a supervisor writes them, from a thread."""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time

import pytest

from core.cli.common import CliError
from core.cli.follow import follow, follow_group
from core.cli.train import RESUMES_BY_ITSELF, _detach_or_follow
from core.run.status import write_status
from core.util.procs import process_identity
from tests.training_helpers import make_run, wait_for


def crashed_with_a_resume(runs_dir, due_in_s=600.0):
    run = make_run(runs_dir, {"algo": "PPO", "budget": {"total_timesteps": 512}})
    write_status(run, state="crashed", attempt=1, ended_at=time.time(), failure_kind="killed",
                 exit_reason="the worker was killed (SIGKILL) at step 256",
                 auto_resume={"attempt": 1, "count": 1, "limit": 2, "due_at": time.time() + due_in_s})
    return run


class Said:
    """What the command printed on stderr so far (capsys, read from the thread that moves the run)."""

    def __init__(self, capsys):
        self.capsys, self.text = capsys, ""

    def __contains__(self, words: str) -> bool:
        self.text += self.capsys.readouterr().err
        return words in self.text


def in_thread(action):
    thread = threading.Thread(target=action, daemon=True)
    thread.start()
    return thread


def test_train_follows_a_crashed_run_through_its_planned_resume_to_its_end(runs_dir, capsys):
    run = crashed_with_a_resume(runs_dir)
    said = Said(capsys)

    def resume_then_finish():
        wait_for(lambda: "resumes by itself at" in said, timeout=60, what="the follow to say the resume")
        # the resumed worker (this process stands in for it: a live pid)
        write_status(run, state="running", attempt=2, auto_resume={"attempt": 1, "count": 1, "limit": 2},
                     **process_identity())
        write_status(run, state="finished", ended_at=time.time(), exit_reason=None)

    thread = in_thread(resume_then_finish)
    end = follow(run, poll_s=0.05)
    thread.join(10)
    assert (end.state, end.resumes_at) == ("finished", None)
    assert "following it (Ctrl-C leaves it to resume by itself)" in said.text


def test_a_group_waits_for_a_seed_whose_resume_is_planned(runs_dir, capsys):
    done = make_run(runs_dir, {"algo": "PPO", "name": "a"})
    write_status(done, state="finished", ended_at=time.time())
    resuming = crashed_with_a_resume(runs_dir)
    said = Said(capsys)

    def finish():
        wait_for(lambda: "resumes by itself at" in said, timeout=60, what="the group to say the resume")
        write_status(resuming, state="finished", ended_at=time.time(), attempt=2)

    thread = in_thread(finish)
    ends = follow_group([done, resuming], [0, 1], poll_s=0.05)
    thread.join(10)
    assert [e.state for e in ends] == ["finished", "finished"]


def test_ctrl_c_while_the_resume_is_awaited_exits_3_naming_when_it_resumes(runs_dir, capsys):
    run = crashed_with_a_resume(runs_dir)
    said = Said(capsys)

    def ctrl_c():  # the real signal a terminal sends: Python raises KeyboardInterrupt in the main thread
        wait_for(lambda: "resumes by itself at" in said, timeout=60, what="the follow to say the resume")
        os.kill(os.getpid(), signal.SIGINT)

    thread = in_thread(ctrl_c)
    with pytest.raises(CliError) as left:
        _detach_or_follow(argparse.Namespace(detach=False, json=False), run, None)
    thread.join(10)
    assert left.value.code == RESUMES_BY_ITSELF == 3
    assert "crashed" in str(left.value) and "it resumes by itself at" in str(left.value)
    assert f"rlpanel runs {run.name}" in str(left.value)


def test_a_crash_nothing_resumes_exits_1(runs_dir):
    run = make_run(runs_dir, {"algo": "PPO"})
    write_status(run, state="crashed", attempt=1, ended_at=time.time(), exit_reason="killed",
                 auto_resume={"attempt": 1, "limit": 0})
    with pytest.raises(CliError) as crashed:
        _detach_or_follow(argparse.Namespace(detach=False, json=False), run, None)
    assert crashed.value.code == 1 and "resumes" not in str(crashed.value)


@pytest.mark.training
def test_rlpanel_train_follows_a_real_automatic_resume_and_exits_0(tmp_path, runs_dir):
    """The worker kills itself (SIGKILL) at step 300; its supervisor plans the resume (0.5 s) and starts it."""
    import json

    from core.run.status import read_status
    from tests.training_helpers import cli

    env = "tests.core.night.night_env:NightEnv"
    done = cli("train", "--algo", "PPO", "--env", env, "--trust", "tests.core.night.night_env", "--timesteps", "640",
               "--set", f"env.kwargs={{die_at: 300, marker: '{tmp_path / 'killed'}'}}", "--set", "ppo.n_steps=64",
               "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=1", "--set", "runtime.n_envs=1",
               "--set", "runtime.vec_env=dummy", "--set", "budget.checkpoint_every=128",
               "--set", "runtime.auto_resume=1", "--set", "runtime.auto_resume_after_s=0.5",
               "--runs-dir", str(runs_dir), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["state"] == "finished" and result["resumes_at"] is None
    # the crash is said as the follower first saw it: the resume planned ("it resumes by itself at ..."), or on a
    # loaded machine a moment before, while the supervisor decides; either way it follows the run to its end
    assert "following it" in done.stderr
    assert "it resumes by itself at" in done.stderr or "deciding whether it resumes by itself" in done.stderr
    status = read_status(runs_dir / result["id"])
    assert status.attempt == 2 and [h["kind"] for h in status.auto_resume["history"]] == ["killed"]
