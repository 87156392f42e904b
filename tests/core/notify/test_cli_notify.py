"""``rlpanel notify add|show|remove|test``: masked output, exit codes naming each failed URL."""

from __future__ import annotations

import json
import socket

from tests.notify_sink import SECRET, NotifySink
from tests.training_helpers import cli


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_add_show_test_remove_with_every_url_masked(user_home):
    dead = f"json://rlpanel:{SECRET}@127.0.0.1:{free_port()}/dead/{SECRET}"
    with NotifySink() as sink:
        added = cli("notify", "add", sink.url, "--events", "failed,queue_end")
        assert added.returncode == 0, added.stderr
        assert "added json://***:***@127.0.0.1" in added.stdout and "failed, queue_end" in added.stdout
        assert cli("notify", "add", dead).returncode == 0
        shown = cli("notify", "show")
        assert shown.returncode == 0 and "1. json://***:***@127.0.0.1" in shown.stdout and "2. json://" in shown.stdout
        data = json.loads(cli("notify", "show", "--json").stdout)
        assert [u["events"] for u in data["urls"]][0] == ["failed", "queue_end"] and data["warning"] is None

        tested = cli("notify", "test")
        assert sink.wait(lambda m: m["title"] == "rlpanel: test notification", timeout=30)
        assert tested.returncode == 1
        assert "sent: json://***:***@127.0.0.1" in tested.stdout and "FAILED: json://***:***@127.0.0.1" in tested.stdout
        assert "1 of 2 failed: json://***:***@127.0.0.1" in tested.stderr
        for out in (added, shown, tested):
            assert SECRET not in out.stdout + out.stderr

        removed = cli("notify", "remove", "2")
        assert removed.returncode == 0 and SECRET not in removed.stdout
        again = cli("notify", "test")
        assert again.returncode == 0, again.stderr
    assert (user_home / "notify.yaml").read_text().count("json://") == 1


def test_bad_input_is_refused_naming_the_field_and_the_file_is_kept(user_home):
    bad = cli("notify", "add", "ntfys://ntfy.sh/topic", "--events", "failed,oops")
    assert bad.returncode == 2 and "--events: 'oops' is not an event" in bad.stderr
    unknown = cli("notify", "add", f"nosuch://host.example.com/{SECRET}")
    assert unknown.returncode == 2 and "apprise does not know nosuch://host.example.com/***" in unknown.stderr
    assert SECRET not in unknown.stderr and not (user_home / "notify.yaml").exists()
    (user_home / "notify.yaml").write_text("urls: [ntfys://ntfy.sh/t]\nevents: [finish]\n")
    for args in (("show",), ("add", "ntfys://ntfy.sh/other"), ("test",), ("remove", "1")):
        out = cli("notify", *args)
        assert out.returncode == 2 and "events: 'finish' is not an event" in out.stderr and "left as it is" in out.stderr
    assert (user_home / "notify.yaml").read_text() == "urls: [ntfys://ntfy.sh/t]\nevents: [finish]\n"


def test_test_without_urls_says_how_to_add_one():
    out = cli("notify", "test")
    assert out.returncode == 2 and "rlpanel notify add URL" in out.stderr
