"""notify.yaml: its shape, per-URL events, mode 0600, and a bad file named by field, never overwritten."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from core.notify.events import EVENTS
from core.notify.mask import mask_url, scrub
from core.notify.settings import (
    NotifySettings,
    NotifySettingsError,
    add_target,
    load_settings,
    remove_target,
    save_settings,
    settings_path,
)


@pytest.mark.parametrize(("url", "shown"), [
    ("json://127.0.0.1:8080", "json://127.0.0.1:8080"),
    ("json://user:pw@127.0.0.1:8080/hook/tok", "json://***:***@127.0.0.1:8080/***/***"),
    ("mailto://me:hunter22@gmail.com", "mailto://***:***@gmail.com"),
    ("tgram://123456:ABCdefGHI/987654", "tgram://***"),  # not a host:port at all: all of it hidden
    ("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js", "discord://***/***"),
    ("ntfys://ntfy.sh/my-topic?priority=high", "ntfys://ntfy.sh/***?priority=***"),
    ("slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ", "slack://***/***/***"),
    ("not a url", "***"),
])
def test_mask_url_keeps_the_host_and_hides_the_secrets(url, shown):
    assert mask_url(url) == shown


def test_scrub_hides_a_url_and_its_parts_in_free_text():
    url = "tgram://123456:ABCdefGHI/987654"
    text = scrub(f"failed for {url}; token ABCdefGHI refused", [url])
    assert "ABCdefGHI" not in text and "123456" not in text and "tgram://***" in text


def test_no_file_means_no_urls_and_every_event():
    settings = load_settings()
    assert settings.targets == () and settings.events == EVENTS
    assert settings.urls_for("failed") == []


def test_per_url_events_and_the_default(user_home):
    (user_home / "notify.yaml").write_text(
        "urls:\n  - ntfys://ntfy.sh/all-topic\n  - {url: 'json://127.0.0.1:9/x', events: [failed, queue_end]}\n"
        "events: [finished, failed, crashed, queue_end]\n")
    settings = load_settings()
    assert settings.urls_for("finished") == ["ntfys://ntfy.sh/all-topic"]
    assert settings.urls_for("failed") == ["ntfys://ntfy.sh/all-topic", "json://127.0.0.1:9/x"]
    assert settings.urls_for("queue_end") == ["ntfys://ntfy.sh/all-topic", "json://127.0.0.1:9/x"]
    assert settings.urls_for("paused") == []


@pytest.mark.skipif(sys.platform.startswith("win"), reason="POSIX file modes")
def test_saved_with_mode_0600_and_read_back(user_home):
    settings = add_target(NotifySettings(), "json://u:pw@127.0.0.1:9/hook", ("failed",))
    path = save_settings(settings)
    assert path == settings_path() == user_home / "notify.yaml"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    back = load_settings()
    assert back.targets == settings.targets and back.urls_for("failed") == ["json://u:pw@127.0.0.1:9/hook"]
    removed, target = remove_target(back, "1")
    assert removed.targets == () and target.url == "json://u:pw@127.0.0.1:9/hook"


@pytest.mark.parametrize(("text", "words"), [
    ("urls: [ntfys://ntfy.sh/t]\nevents: [finish]\n", ["events", "'finish' is not an event", "queue_end"]),
    ("urls:\n  - {url: 'json://h.example.com/tok', events: [failed, nope]}\n", ["urls[0].events", "'nope'"]),
    ("urls: [42]\n", ["urls[0]", "apprise URL", "int"]),
    ("urls: ['no scheme secretvalue']\n", ["urls[0]", "is not an apprise URL", "SCHEME://"]),
    ("urls: ntfys://ntfy.sh/t\n", ["urls: expected a list"]),
    ("url: [x]\n", ["unknown key url"]),
    ("urls: [\n", ["cannot read YAML"]),
])
def test_a_bad_file_names_the_field_and_is_never_overwritten(user_home, text, words):
    path = user_home / "notify.yaml"
    path.write_text(text)
    with pytest.raises(NotifySettingsError) as info:
        load_settings()
    for word in words:
        assert word in str(info.value)
    assert "secretvalue" not in str(info.value), "the URL is never repeated in a message"
    assert path.read_text() == text
