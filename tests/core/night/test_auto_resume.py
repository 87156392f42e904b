"""Issue 28: a crashed run resumes by itself (``runtime.auto_resume``), a bounded number of times, never after a
failure that would repeat; the decision is in the notification, the status and the morning report."""

from __future__ import annotations

import pytest

from core.launch import auto_resume
from core.notify.settings import NotifySettings, Target, save_settings
from core.results.report import morning_report
from core.run import resume_words
from core.run.status import read_status, write_status
from core.run.store import RunStore
from tests.notify_sink import NotifySink
from tests.training_helpers import copy_run, make_run, records, run_worker, wait_state

ENV = "tests.core.night.night_env:NightEnv"


def night_run(runs_dir, env_kwargs, checkpoint_every=128, **runtime):
    return make_run(runs_dir, {
        "algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "env": {"entry_point": ENV, "kwargs": env_kwargs},
        "runtime": {"n_envs": 1, "vec_env": "dummy", "telemetry_hz": 0, "auto_resume_after_s": 0.2, **runtime},
        "budget": {"total_timesteps": 640, "checkpoint_every": checkpoint_every}})


# --- the decision, on a real run folder (the session's trained run) -----------------------------------------------

@pytest.fixture
def crashed(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir, state="crashed")
    write_status(run, attempt=1, failure_kind="killed", queue={"id": "q", "job": "a"})
    return run


def test_a_queued_run_resumes_twice_by_default_with_a_doubling_back_off(crashed):
    first = auto_resume.decide(crashed, read_status(crashed), now=1000.0)
    assert (first.due_at, first.count, first.limit) == (1030.0, 1, 2), "30 s, the first of 2"
    write_status(crashed, auto_resume={"count": 1, "history": [{"kind": "error", "from_step": 512}]})
    second = auto_resume.decide(crashed, read_status(crashed), now=1000.0)
    assert (second.due_at, second.count) == (1060.0, 2)
    write_status(crashed, auto_resume={"count": 2, "history": []})
    assert "resumed automatically 2 times already" in auto_resume.decide(crashed, read_status(crashed)).gave_up
    write_status(crashed, queue=None)  # a run of its own
    assert auto_resume.decide(crashed, read_status(crashed)).limit == 0, "off by default outside a queue"


@pytest.mark.parametrize(("kind", "words"), [("config", "config is not valid"), ("diverged", "diverged"),
                                             ("disk_full", "disk is full"), ("interrupted", "by hand")])
def test_a_failure_that_would_repeat_is_not_resumed(crashed, kind, words):
    write_status(crashed, failure_kind=kind)
    decision = auto_resume.decide(crashed, read_status(crashed))
    assert decision.due_at is None and words in decision.gave_up
    assert decision.sentence.startswith("it is not resumed automatically: ")


def test_out_of_memory_twice_from_the_same_checkpoint_is_not_resumed_a_third_time(crashed):
    newest = 1024  # the trained run's newest checkpoint
    write_status(crashed, auto_resume={"count": 1, "history": [{"kind": "gpu_oom", "from_step": newest}]})
    decision = auto_resume.decide(crashed, read_status(crashed))
    assert decision.due_at is None and "out of memory (killed) twice since the checkpoint at step 1,024" in decision.gave_up
    write_status(crashed, auto_resume={"count": 1, "history": [{"kind": "gpu_oom", "from_step": 512}]})
    assert auto_resume.decide(crashed, read_status(crashed)).due_at is not None, "it got further: worth a try"


# --- real workers --------------------------------------------------------------------------------------------------

@pytest.mark.training
def test_a_killed_worker_resumes_by_itself_to_finished_and_the_night_says_so(runs_dir, tmp_path):
    with NotifySink() as sink:
        save_settings(NotifySettings((Target(sink.url, ("crashed", "finished")),)))
        run = night_run(runs_dir, {"die_at": 300, "marker": str(tmp_path / "killed")}, auto_resume=1)
        run_worker(run, timeout=120)  # the first supervisor: it plans the resume, waits 0.2 s and launches it
        assert wait_state(run, ("finished", "failed"), timeout=120) == "finished", (run / "worker.log").read_text()[-3000:]
        crash = sink.wait(lambda m: "crashed" in m["title"])
        sink.wait(lambda m: "finished" in m["title"])
    status = read_status(run)
    assert status.attempt == 2 and status.resumed_from == "crashed"
    auto = status.auto_resume
    assert auto["count"] == 1 and auto["history"][0]["kind"] == "killed" and auto["history"][0]["from_step"] == 256
    assert "SIGKILL" in crash["message"] and "resumes by itself at" in crash["message"]
    assert "from its checkpoint at step 256 (automatic resume 1 of 1)" in crash["message"]
    assert "rlpanel resume" not in crash["message"], "a resume is planned: no command to type"
    assert reached_step(crash["message"]) >= 256, "never a step before the checkpoint it resumes from"
    assert [r["step"] for r in records(run, "attempt")] == [0, 256]
    row = next(r for r in morning_report(RunStore(runs_dir), since=0).rows if r.run_id == run.name)
    assert "resumed after it was crashed, 2 attempts" in row.resumed and "1 automatic resume" in row.resumed


@pytest.mark.training
def test_a_run_that_keeps_failing_is_resumed_n_times_then_given_up(runs_dir):
    run = night_run(runs_dir, {"raise_at": 200}, auto_resume=2)  # no marker: every attempt raises
    run_worker(run, timeout=120)
    wait_state(run, ("failed",), timeout=120)

    def given_up():
        status = read_status(run)
        return status.state == "failed" and status.attempt == 3 and (status.auto_resume or {}).get("gave_up")

    from tests.training_helpers import wait_for

    wait_for(given_up, timeout=120, what="the third attempt to fail and the resumes to be given up")
    status = read_status(run)
    assert status.failure_kind == "error" and "simulator's connection was lost" in status.exit_reason
    assert "resumed automatically 2 times already (runtime.auto_resume: 2)" in status.auto_resume["gave_up"]
    assert [h["kind"] for h in status.auto_resume["history"]] == ["error"] * 3


def reached_step(message: str) -> int:
    """The step of "killed (...) at step 1,234" in a crash message."""
    import re

    return int(re.search(r"\) at step ([\d,]+)", message).group(1).replace(",", ""))


@pytest.mark.training
def test_a_killed_run_of_its_own_names_the_resume_command_and_never_a_step_before_its_checkpoint(runs_dir, tmp_path):
    """Issue 42: a run with auto_resume 0, killed, said "it resumes from the checkpoint at step 50,000" and stayed
    crashed; killed just after a checkpoint, its records (at most one a second) ended before it: "killed at step
    49,997; it resumes from the checkpoint at step 50,000"."""
    with NotifySink() as sink:
        save_settings(NotifySettings((Target(sink.url, ("crashed",)),)))
        # checkpoints at steps 75 and 150: the first flush writes a progress record (at 75), the second only the
        # episodes it covers, which end at step 140 (20 steps each; the update's record says 128), and the kill at
        # 155 comes well before the next progress record, a second after the first
        run = night_run(runs_dir, {"die_at": 155, "marker": str(tmp_path / "killed")}, checkpoint_every=75,
                        auto_resume=0)
        run_worker(run, timeout=120)
        crash = sink.wait(lambda m: "crashed" in m["title"])
    status = read_status(run)
    assert status.state == "crashed" and status.attempt == 1, "nothing resumed it"
    for text in (status.exit_reason, status.error_message, crash["message"]):
        assert f"resume it with `rlpanel resume {run.name}` (from its checkpoint at step 150)" in text, text
        assert "resumes" not in text, text
        assert reached_step(text) == 150, text


# --- issue 43: a GPU driver reset (Windows' TDR) resumes like a crash --------------------------------------------

def test_a_gpu_driver_reset_resumes_like_a_crash_even_twice_from_the_same_checkpoint_and_at_most_the_limit(crashed):
    from core.worker.gpu_reset import KIND

    assert KIND == "gpu_reset" and KIND in auto_resume.KINDS and KIND not in auto_resume.NEVER
    write_status(crashed, failure_kind=KIND)
    first = auto_resume.decide(crashed, read_status(crashed), now=1000.0)
    assert (first.due_at, first.count, first.limit, first.gave_up) == (1030.0, 1, 2, None)
    newest = 1024  # a reset from the same checkpoint is not out of memory: it need not come again
    write_status(crashed, auto_resume={"count": 1, "history": [{"kind": KIND, "from_step": newest}]})
    assert auto_resume.decide(crashed, read_status(crashed), now=1000.0).due_at == 1060.0
    write_status(crashed, auto_resume={"count": 2, "history": [{"kind": KIND, "from_step": newest}] * 2})
    assert "resumed automatically 2 times already (runtime.auto_resume: 2)" in auto_resume.decide(
        crashed, read_status(crashed)).gave_up


@pytest.mark.parametrize(("auto", "said"), [
    ({"count": 1, "history": [{"kind": "gpu_reset"}]}, "1 automatic resume, after a GPU driver reset"),
    ({"count": 2, "history": [{"kind": "gpu_reset"}, {"kind": "killed"}, {"kind": "gpu_reset"}],
      "gave_up": "it was resumed automatically 2 times already (runtime.auto_resume: 2)"},
     "2 automatic resumes, after a GPU driver reset, a kill; not resumed automatically: it was resumed automatically "
     "2 times already (runtime.auto_resume: 2)"),
    ({"count": 1, "history": [{"kind": "something new"}]}, "1 automatic resume, after a crash"),
    ({"count": 0, "history": [{"kind": "gpu_reset"}], "limit": 0}, ""),
])
def test_the_morning_reports_words_name_what_the_resumes_followed(auto, said):
    assert resume_words.summary(auto) == said
