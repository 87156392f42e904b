"""Sending through apprise to a local HTTP server: retries, failures masked, never raised."""

from __future__ import annotations

from core.notify.run_events import notify_queue_end, notify_run_event
from core.notify.send import send_one
from core.notify.settings import NotifySettings, Target
from tests.notify_sink import SECRET, NotifySink


def test_a_notification_reaches_the_server_with_title_and_body():
    with NotifySink() as sink:
        result = send_one(sink.url, "rlpanel: test", "hello", sleep=lambda s: None)
        assert result.ok and result.tries == 1
        msg = sink.wait(lambda m: m["title"] == "rlpanel: test", timeout=30)
        assert msg["message"] == "hello" and msg["path"] == f"/hook/{SECRET}"
        assert SECRET not in result.url


def test_a_refused_send_is_retried():
    pauses = []
    with NotifySink(fail_first=2) as sink:
        result = send_one(sink.url, "rlpanel: retry", "body", sleep=pauses.append)
        assert result.ok and result.tries == 3 and sink.requests == 3
        assert pauses == [1.0, 4.0]


def test_a_failed_send_is_logged_masked_and_never_raised(capsys):
    lines: list[str] = []
    with NotifySink(fail_first=99) as sink:
        settings = NotifySettings((Target(sink.url),))
        results = notify_queue_end({"id": "q1", "state": "finished", "jobs": []}, settings=settings, log=lines.append,
                                   sleep=lambda s: None)
    assert [r.ok for r in results] == [False] and results[0].tries == 3
    assert len(lines) == 1 and "not sent to json://***:***@127.0.0.1" in lines[0]
    out = capsys.readouterr()
    assert SECRET not in lines[0] + out.out + out.err


def test_an_unknown_scheme_fails_without_a_try():
    result = send_one("nosuchscheme://host.example.com/tok", "t", "b")
    assert not result.ok and result.tries == 0 and "scheme" in result.error


def test_events_not_taken_send_nothing(tmp_path):
    with NotifySink() as sink:
        settings = NotifySettings((Target(sink.url, ("failed",)),))
        assert notify_run_event(tmp_path, "finished", "done", settings=settings) == []
        assert sink.requests == 0


def test_a_bad_notify_yaml_is_one_line_and_no_send(user_home, tmp_path):
    (user_home / "notify.yaml").write_text("urls: [42]\n")
    lines: list[str] = []
    assert notify_run_event(tmp_path, "failed", "x", log=lines.append) == []
    assert len(lines) == 1 and "urls[0]" in lines[0] and "notify.yaml" in lines[0]


def test_a_guard_sends_in_the_background_without_waiting(tmp_path):
    with NotifySink() as sink:
        settings = NotifySettings((Target(sink.url),))
        assert notify_run_event(tmp_path, "paused", "GPU at 91 C for 10 s", settings=settings, in_background=True) == []
        msg = sink.wait(lambda m: "paused" in m["title"], timeout=30)
    assert tmp_path.name in msg["title"] and "GPU at 91 C for 10 s" in msg["message"]


def test_windows_moving_gpu_memory_to_system_ram_is_sent_as_a_warning(user_home, tmp_path):
    from core.telemetry.guard import GuardEvent
    from core.worker.guarding import notify_guard_event

    with NotifySink() as sink:
        (user_home / "notify.yaml").write_text(f"urls: ['{sink.url}']\n")
        notify_guard_event(tmp_path, GuardEvent("gpu_sysmem_fallback", "warning", "Windows is moving GPU memory to "
                                                "system RAM: the run has slowed from 1,200 to 300 steps/s"))
        msg = sink.wait(lambda m: "warning" in m["title"], timeout=30)
    assert tmp_path.name in msg["title"] and "slowed from 1,200 to 300 steps/s" in msg["message"]
