"""Opening a run from its columnar cache (core.run.cache.history): the same columns as a full parse, built,
extended, rebuilt when torn or stale; the history handed over in chunks from the reader's thread; the
machine's series bounded in points; the redraw after a load drawn in turns of the event loop."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict

import numpy as np
import pytest
from PySide6.QtCore import Qt, QThread

import app.monitor.follower as follower_module
import app.monitor.panel as panel_module
from app.monitor.follower import RunController, RunFollower
from app.monitor.panel import MonitorPanel
from app.plots.buffers import RAW_SHARE, SeriesBuffer
from app.plots.system_plots import MAX_POINTS, SystemPlots
from core.run.cache.columns import metrics_batch, telemetry_batch
from core.run.cache.history import HistoryCache
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.telemetry.summary import well_formed_sample
from core.util.jsonl import read_jsonl
from tests.app.fake_runs import append_jsonl, episodes, gpu_lines
from tests.training_helpers import copy_run

CHUNK = 16 * 1024  # bytes read per tick: a small run is many chunks


@pytest.fixture
def run(trained_run, runs_dir, monkeypatch):
    """A real trained run, made longer (a stop and a resume in it: a break), cached from 4 KiB chunks; without the
    cache its worker wrote (core.run.cache.writer): the window's own cache, as for a run of an older version."""
    monkeypatch.setattr(follower_module, "CACHE_MIN_BYTES", 4096)
    monkeypatch.setattr(follower_module, "REPLAY_BYTES", 24 * 1024)
    run_dir = copy_run(trained_run, runs_dir)
    layout = RunDir(run_dir)
    shutil.rmtree(layout.history_cache, ignore_errors=True)
    append_jsonl(layout.metrics, [{"kind": "attempt", "t": 2e9, "step": 0, "attempt": 2}, *episodes(0, 300, step0=10**6)])
    append_jsonl(layout.telemetry, [{"t": 2e9, "kind": "status", "nvml": True, "reason": None}, *gpu_lines(300, t0=2e9)])
    return run_dir


def open_run(run_dir, cache: bool = True) -> tuple[RunController, dict[str, list]]:
    """Follow ``run_dir`` in this thread, poll by hand until caught up; the batches as the window gets them."""
    controller = RunController(poll_ms=60_000, chunk_bytes=CHUNK, cache=cache)
    got: dict[str, list] = {"metrics": [], "telemetry": [], "loading": []}
    controller.records.connect(lambda gen, batch: (got["metrics"].append(batch), controller.ack(gen)))
    controller.telemetry.connect(lambda gen, batch: (got["telemetry"].append(batch), controller.ack(gen)))
    controller.loading.connect(lambda gen, share: got["loading"].append(share))
    controller.follow(str(run_dir), 1)
    for _ in range(500):
        if got["loading"] and got["loading"][-1] == -1:
            break
        controller.poll()
    controller.shutdown()
    assert got["loading"][-1] == -1
    return controller, got


def columns(batches) -> tuple[dict, list, list]:
    """The batches as one column per series, where the breaks fell, and the events (chunking aside)."""
    cols: dict = defaultdict(list)
    breaks, events = [], []
    for batch in batches:
        events += getattr(batch, "events", [])
        for part in batch.parts:
            if part.after_break:
                breaks.append({key: sum(map(len, arrays)) for key, arrays in cols.items()})
            named = dict(part.series) if hasattr(part, "series") else {
                "episodes": part.episodes, "evals": part.evals, "progress": part.progress, "weights": part.episode_weights,
                **{("train", k): v for k, v in part.train.items()}}
            for key, value in named.items():
                if value is not None:
                    for i, array in enumerate(value if isinstance(value, tuple) else (value,)):
                        cols[(key, i)].append(array)
            if hasattr(part, "throttled"):
                cols["throttled"].append(np.asarray(part.throttled, dtype=float).ravel())
    return {key: np.concatenate(arrays) for key, arrays in cols.items()}, breaks, events


def full_parse(run_dir) -> tuple[tuple, tuple]:
    layout = RunDir(run_dir)
    metrics = metrics_batch(well_formed_only(read_jsonl(layout.metrics)))
    telemetry = telemetry_batch([s for s in read_jsonl(layout.telemetry) if well_formed_sample(s)])
    return columns([metrics]), columns([telemetry])


def assert_same(got: dict[str, list], expected: tuple[tuple, tuple]) -> None:
    for batches, (cols, breaks, events) in zip((got["metrics"], got["telemetry"]), expected, strict=True):
        got_cols, got_breaks, got_events = columns(batches)
        assert got_cols.keys() == cols.keys()
        for key in cols:
            np.testing.assert_array_equal(got_cols[key], cols[key], err_msg=str(key))
        assert got_breaks == breaks
        assert got_events == events


def test_a_cache_built_then_extended_gives_what_a_full_parse_gives(run):
    layout = RunDir(run)
    first, got = open_run(run)
    assert first.cached_batches == 0 and len(got["metrics"]) > 1  # parsed in chunks, each kept in the cache
    assert_same(got, full_parse(run))
    cached_end = HistoryCache(layout.cache_of(layout.metrics), layout.metrics)
    assert cached_end.chunks() and 0 < cached_end.end <= layout.metrics.stat().st_size

    # The run goes on: more records, a resume (a break), more telemetry; the next open reads the cache, then the rest.
    append_jsonl(layout.metrics, [*episodes(300, 200, step0=2 * 10**6), {"kind": "attempt", "t": 3e9, "step": 0},
                                  *episodes(500, 100, step0=3 * 10**6)])
    append_jsonl(layout.telemetry, gpu_lines(200, t0=2.5e9))
    again, got = open_run(run)
    assert again.cached_batches > 0
    assert_same(got, full_parse(run))
    extended = HistoryCache(layout.cache_of(layout.metrics), layout.metrics)
    assert extended.chunks() and extended.end > cached_end.end  # the new records were added to it

    # A third open, from a cache that now covers nearly everything, is still the same.
    _, got = open_run(run)
    assert_same(got, full_parse(run))
    _, uncached = open_run(run, cache=False)
    assert_same(uncached, full_parse(run))


def _tear(path):
    path.write_bytes(path.read_bytes()[:-7])  # a window killed mid-append


def _truncate(path):
    path.write_bytes(path.read_bytes()[:12])  # half a chunk's head


def _garbage(path):
    path.write_bytes(b"not a cache at all" * 50)


@pytest.mark.parametrize("damage", [_tear, _truncate, _garbage, "source-rewritten", "source-shorter"])
def test_a_torn_truncated_or_stale_cache_is_rebuilt(run, damage):
    layout = RunDir(run)
    open_run(run)
    cache_file = layout.cache_of(layout.metrics)
    valid = len(HistoryCache(cache_file, layout.metrics).chunks())
    assert valid > 1
    if damage == "source-rewritten":  # same length, other numbers: what a restart's rewrite looks like to the cache
        text = layout.metrics.read_text()
        recs = text.splitlines()
        recs[0] = json.dumps({**json.loads(recs[0]), "t": 1.0})[: len(recs[0])].ljust(len(recs[0]))
        layout.metrics.write_text("\n".join(recs) + "\n")
    elif damage == "source-shorter":  # the file was replaced by a shorter one (thinned, restarted)
        layout.metrics.write_text("".join(json.dumps(r) + "\n" for r in episodes(0, 150)))
    else:
        damage(cache_file)
    cache = HistoryCache(cache_file, layout.metrics)
    assert len(cache.chunks()) < valid and cache.rebuilt

    _, got = open_run(run)
    assert_same(got, full_parse(run))
    rebuilt = HistoryCache(cache_file, layout.metrics)
    assert rebuilt.chunks() and not rebuilt.rebuilt  # whole again: the next open reads it
    _, got = open_run(run)
    assert_same(got, full_parse(run))


def test_a_chunk_that_fails_its_crc_is_cut_off_and_cached_again_so_the_next_open_reads_the_cache(run):
    layout = RunDir(run)
    # files of several chunks each, however long the training took
    append_jsonl(layout.metrics, episodes(300, 500, step0=2 * 10**6))
    append_jsonl(layout.telemetry, gpu_lines(400, t0=2.1e9))
    open_run(run)
    ends = {}
    for source in (layout.metrics, layout.telemetry):
        cache = HistoryCache(layout.cache_of(source), source)
        chunks = cache.chunks()
        assert len(chunks) > 2
        ends[source] = cache.end
        bad = chunks[len(chunks) // 2]  # a bad sector in the middle: one byte of its body flipped on disk
        with open(layout.cache_of(source), "r+b") as fh:
            fh.seek(bad.body_offset + bad.body_len // 2)
            byte = fh.read(1)
            fh.seek(-1, 1)
            fh.write(bytes([byte[0] ^ 0xFF]))
        with pytest.raises(ValueError):
            cache.load(bad)

    damaged, got = open_run(run)  # the chunks before it from the cache, the rest parsed again from the JSONL
    assert damaged.cached_batches > 0
    assert_same(got, full_parse(run))
    for source in (layout.metrics, layout.telemetry):  # cut back at the bad chunk, and what was parsed appended
        repaired = HistoryCache(layout.cache_of(source), source)
        for entry in repaired.chunks():
            repaired.load(entry)  # every body passes its CRC again
        assert not repaired.rebuilt and repaired.end >= ends[source]
    again, got = open_run(run)
    assert again.cached_batches > 0
    assert_same(got, full_parse(run))


def test_opening_hands_the_history_over_in_chunks_from_the_readers_thread(qtbot, run):
    follower = RunFollower(poll_ms=50, chunk_bytes=CHUNK)
    threads, records = set(), []
    gui = QThread.currentThread()
    follower.controller.records.connect(lambda gen, batch: threads.add(QThread.currentThread() is gui),
                                        Qt.ConnectionType.DirectConnection)
    follower.records.connect(lambda batch: records.append(batch.records))
    done: list[float] = []
    follower.loading.connect(done.append)
    expected = len(read_jsonl(RunDir(run).metrics))
    try:
        for cached in (False, True):  # the first open parses (and caches), the second reads the cache
            records.clear()
            done.clear()
            follower.follow(run)
            qtbot.waitUntil(lambda: bool(done) and done[-1] == -1, timeout=20_000)
            assert sum(records) == expected and len(records) > 2  # in chunks: never the whole history in one call
            assert (follower.controller.cached_batches > 0) is cached
            assert threads == {False}  # read, parsed and decoded in the controller's thread, not the window's
            assert follower.controller.most_unacked <= 2  # one batch of each file at a time: nothing piles up
    finally:
        follower.close()


def test_a_bounded_buffer_keeps_the_newest_points_raw_and_the_envelope_of_the_rest():
    limit = 2**16
    buf = SeriesBuffer(max_points=limit)
    n = 10 * limit
    t = np.arange(n, dtype=float)
    values = np.sin(t / 500.0)
    values[1234] = 50.0  # a spike long ago
    values[n // 3] = np.nan  # a missing reading
    for start in range(0, n, 3000):
        if start == 6000 * 10:
            buf.mark_break()  # the run stopped and resumed
        buf.extend(t[start:start + 3000], t[start:start + 3000], values[start:start + 3000])
        assert buf.size <= limit and buf._data.shape[1] <= limit  # never more points, nor more room
    assert buf.compactions > 1
    raw = limit // RAW_SHARE
    np.testing.assert_array_equal(buf.values[-raw:], values[-raw:])  # the newest as they were
    assert np.nanmax(buf.values) == 50.0 and np.nanmin(buf.values) == np.nanmin(values)  # every extreme is still there
    assert (np.diff(buf.times) > 0).all() and set(buf.times) <= set(t)  # real points, in order
    assert [buf.times[b] for b in buf.breaks] == [60_000.0] and buf.times[buf.breaks[0] - 1] == 59_999.0


def test_the_machines_series_stay_bounded_over_a_48_hour_run(qtbot):
    plots = SystemPlots()
    samples = 48 * 3600 * 5
    for start in range(0, samples, 50_000):
        t = 1e9 + np.arange(start, min(samples, start + 50_000), dtype=float) / 5
        plots.add_series({("temperature_c", "gpu0"): (t, 60 + np.sin(t)), ("rss_bytes", "run"): (t, t * 0 + 1.0)})
    for field in ("temperature_c", "host_memory_bytes"):
        buf = plots.plots[field].buffer("gpu0" if field == "temperature_c" else plots.plots[field].series_keys()[0])
        assert buf.size <= MAX_POINTS < samples
        assert buf.times[-1] == 1e9 + (samples - 1) / 5 and buf.times[0] == 1e9  # the whole 48 h, at screen resolution


def test_a_timers_redraw_draws_the_plots_in_turns_and_a_full_redraw_all_at_once(qtbot, monkeypatch):
    """The first redraw after a load is cut into turns of the event loop (FRAME_S each); ``redraw()`` still draws all."""
    monkeypatch.setattr(panel_module, "FRAME_S", 0.0)  # one plot a turn: the turns show whatever the machine's speed
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 900)
    panel.show()
    qtbot.waitExposed(panel)
    panel.redraw()
    passes: list[float] = []
    panel.redrawn.connect(passes.append)
    panel.add_batch(metrics_batch([*episodes(0, 2000), *[{"kind": "train", "step": i, "t": i, "train/loss": 1.0 / (1 + i)}
                                                        for i in range(500)]]))
    panel.add_telemetry_batch(telemetry_batch(gpu_lines(3000)))
    plots = len(panel.all_plots())
    panel._timer.stop()  # the turns come from the redraw itself, not from the 50 ms tick
    panel._soon.stop()
    panel._redraw_tick()
    assert 0 < len(panel._pending) < plots and panel._soon.isActive() and not passes  # the rest waits for the next turn
    qtbot.waitUntil(lambda: not panel._pending and len(passes) >= 1, timeout=5000)  # the turns came
    assert len(passes) == 1  # one pass, told once, when its last plot was drawn

    panel.add_telemetry_batch(telemetry_batch(gpu_lines(100, t0=2e9)))
    assert panel.redraw() and not panel._pending and len(passes) == 2  # redraw(): everything at once
