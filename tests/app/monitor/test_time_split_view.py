"""The Monitor says where a real run's time went (issue 31): the bar, the shares and one sentence of advice."""

from __future__ import annotations

from core.run.cache.codec import decode_metrics, encode_metrics, merged
from core.run.cache.columns import metrics_batch
from core.run.time_split import split_of
from core.util.jsonl import read_jsonl
from tests.training_helpers import copy_run


def test_the_monitor_shows_the_split_and_its_advice_for_a_real_run(qtbot, make_window, runs_dir, trained_run):
    run = copy_run(trained_run, runs_dir)
    cycles = split_of(read_jsonl(run / "metrics.jsonl"))
    assert cycles is not None and cycles.n == 8  # 1,024 steps in rollouts of 128
    window = make_window()
    window.open_run(run)
    view = window.monitor.time_split
    qtbot.waitUntil(lambda: view.isVisible() and view.whole.n == cycles.n, timeout=20_000)
    words = view.words.text()
    assert words.startswith(("collecting", "Last 30 s: collecting")) and "whole run" in words
    shares = view.bar.shares
    assert shares is not None and abs(sum(shares) - 1) < 1e-6 and shares[0] > 0
    qtbot.waitUntil(lambda: view.device == "cpu" and view.algo == "PPO", timeout=10_000)  # from the run's status
    assert view.advice.text().endswith(".") and "%" in view.advice.text()
    window.follow_run(None)  # the idle monitor: no run, no split
    assert not view.isVisible() and view.whole.n == 0


def test_a_cached_chunk_keeps_the_split_and_merged_batches_add_up(trained_run):
    recs = list(read_jsonl(trained_run / "metrics.jsonl"))
    whole = metrics_batch(recs)
    back = decode_metrics(*encode_metrics(whole))
    assert back.time_split == whole.time_split and back.recent_cycles == whole.recent_cycles
    half = len(recs) // 2
    joined = merged([metrics_batch(recs[:half]), metrics_batch(recs[half:])])
    assert joined.time_split is not None and whole.time_split is not None
    assert joined.time_split.n == whole.time_split.n
    assert abs(joined.time_split.total_s - whole.time_split.total_s) < 1e-9
    old = encode_metrics(whole)[0]
    del old["time_split"], old["recent_cycles"]  # a chunk cached before the split
    assert decode_metrics(old, encode_metrics(whole)[1]).time_split is None
