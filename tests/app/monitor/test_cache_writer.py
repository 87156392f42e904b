"""The worker's side of the run's cache (core.run.cache.writer): the columns it writes are what a full parse of the
JSONL gives, the first open reads them, and they extend correctly as records are appended, across an attempt, a
torn last line, a resume's cut and a thinning; a record kind the window does not know is skipped."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import app.monitor.follower as follower_module
from app.monitor.follower import at_screen_resolution
from core.run.cache.columns import telemetry_batch
from core.run.cache.history import HistoryCache
from core.run.cache.writer import CacheWriter
from core.run.layout import RunDir
from core.telemetry.thinning import thin_telemetry
from tests.app.fake_runs import append_jsonl, episodes, gpu_lines
from tests.app.monitor.test_history_cache import assert_same, full_parse, open_run
from tests.training_helpers import copy_run

SMALL = 1024  # bytes a chunk covers at least: a small run is many chunks


def covered(run_dir) -> tuple[int, int]:
    """The source bytes each cache covers (metrics, telemetry)."""
    layout = RunDir(run_dir)
    ends = []
    for source in (layout.metrics, layout.telemetry):
        cache = HistoryCache(layout.cache_of(source), source)
        cache.chunks()
        ends.append(cache.end)
    return ends[0], ends[1]


def test_the_worker_wrote_the_cache_and_a_first_open_reads_it(trained_run, runs_dir):
    """``trained_run`` was trained by the real worker: its cache is there before any window opened it."""
    run_dir = copy_run(trained_run, runs_dir)
    layout = RunDir(run_dir)
    metrics_end, telemetry_end = covered(run_dir)
    assert 0 < metrics_end <= layout.metrics.stat().st_size  # the run's last event comes after the writer stops
    opened, got = open_run(run_dir)
    assert opened.cached_batches > 0  # a first open: from the worker's columns
    assert_same(got, full_parse(run_dir))


def covered_chunks(run_dir) -> list:
    """The telemetry cache's chunks."""
    layout = RunDir(run_dir)
    return HistoryCache(layout.cache_of(layout.telemetry), layout.telemetry).chunks()


@pytest.fixture
def run(trained_run, runs_dir):
    """A copy of the real run without its cache: each test builds it with its own writers."""
    run_dir = copy_run(trained_run, runs_dir)
    shutil.rmtree(RunDir(run_dir).history_cache)
    return run_dir


def test_the_cache_extends_across_appends_an_attempt_a_torn_line_and_an_unknown_kind(run):
    layout = RunDir(run)
    writer = CacheWriter(run, min_bytes=SMALL, max_bytes=2 * SMALL)
    writer.update()
    assert writer.chunks >= 3 and covered(run)[0] > 0, (layout.metrics.stat().st_size, covered(run))  # several chunks
    _, got = open_run(run)
    assert_same(got, full_parse(run))

    # more episodes, a record kind this code does not know, a new attempt, and a line still being written
    append_jsonl(layout.metrics, [*episodes(0, 60, step0=10**6), {"kind": "cycle", "t": 2e9, "step": 10**6, "n": 3},
                                  {"kind": "attempt", "t": 2e9, "step": 0, "attempt": 2}, *episodes(60, 60, step0=2 * 10**6)],
                 torn='{"kind": "episode", "step": 3000000, "t": 2')
    append_jsonl(layout.telemetry, [{"t": 2e9, "kind": "status", "nvml": True, "reason": None}, *gpu_lines(80, t0=2e9)])
    before = writer.chunks
    writer.update(min_bytes=1)  # every whole line, however few bytes are left after the last full chunk
    assert writer.chunks > before
    torn_at = layout.metrics.stat().st_size - len('{"kind": "episode", "step": 3000000, "t": 2')
    assert covered(run)[0] == torn_at  # whole lines only: the torn one waits
    _, got = open_run(run)
    assert_same(got, full_parse(run))

    with open(layout.metrics, "a", encoding="utf-8") as fh:  # the line is finished
        fh.write('000000000.5, "reward": 7.0, "length": 20}\n')
    writer.stop()  # what is left is cached at the end, however small
    assert covered(run) == (layout.metrics.stat().st_size, layout.telemetry.stat().st_size)
    opened, got = open_run(run)
    assert opened.cached_batches > 0
    assert_same(got, full_parse(run))


def test_a_resume_that_cut_the_records_back_and_a_thinning_are_cached_again(run):
    layout = RunDir(run)
    append_jsonl(layout.telemetry, gpu_lines(200, t0=1e9))  # old samples a thinning folds into seconds
    writer = CacheWriter(run, min_bytes=SMALL)
    writer.update()
    old_metrics, old_telemetry = covered(run)

    # a resume moves the records past its checkpoint aside: the file is shorter, then grows again
    lines = layout.metrics.read_bytes().splitlines(keepends=True)
    layout.metrics.write_bytes(b"".join(lines[: len(lines) // 2]))
    append_jsonl(layout.metrics, [{"kind": "attempt", "t": 3e9, "step": 0, "attempt": 2}, *episodes(0, 40, step0=10**7)])
    assert thin_telemetry(layout.telemetry, 1.5e9) > 0  # the file is rewritten
    writer.update()
    metrics_end, telemetry_end = covered(run)
    assert metrics_end > 0 and telemetry_end > 0 and (metrics_end, telemetry_end) != (old_metrics, old_telemetry)
    _, got = open_run(run)
    assert_same(got, full_parse(run))


def test_a_file_cut_back_and_grown_past_the_caches_end_between_two_looks_is_cached_again(run):
    """The same file (its inode), shorter and then longer than what the cache covered, before the writer looks
    again: the stale chunks are found by their bytes, not by the file's size."""
    layout = RunDir(run)
    writer = CacheWriter(run, min_bytes=SMALL)
    writer.update()
    old_end = covered(run)[0]
    lines = layout.metrics.read_bytes().splitlines(keepends=True)
    layout.metrics.write_bytes(b"".join(lines[: len(lines) // 2]))
    extra = [{"kind": "attempt", "t": 3e9, "step": 0, "attempt": 2}]
    while layout.metrics.stat().st_size <= old_end + SMALL:
        append_jsonl(layout.metrics, [*extra, *episodes(0, 40, step0=10**7)])
        extra = []
    writer.update()
    assert covered(run)[0] == layout.metrics.stat().st_size
    _, got = open_run(run)
    assert_same(got, full_parse(run))


def test_a_long_history_reaches_the_window_in_bounded_batches_at_screen_resolution(run, monkeypatch):
    monkeypatch.setattr(follower_module, "HISTORY_POINTS", 200)
    monkeypatch.setattr(follower_module, "HISTORY_RAW", 100)
    monkeypatch.setattr(follower_module, "REPLAY_BYTES", 256 * 1024)
    layout = RunDir(run)
    lines = gpu_lines(4000, t0=1e9)
    lines[1234]["temperature_c"] = 99  # a spike the envelope keeps
    lines[2345]["temperature_c"] = 1
    append_jsonl(layout.telemetry, lines)
    CacheWriter(run, min_bytes=64 * 1024, max_bytes=128 * 1024).update()
    opened, got = open_run(run)
    assert opened.cached_batches > 0
    full = full_parse(run)[1][0]
    series = [p.series for b in got["telemetry"] for p in b.parts if ("temperature_c", "gpu0") in p.series]
    assert all(len(s[("temperature_c", "gpu0")][0]) <= 2 * 200 + 100 + 2 for s in series)
    # the cached history came as one batch (its chunks joined, cut to screen resolution as a whole), from its start
    cached = [p for p in got["telemetry"][0].parts if ("temperature_c", "gpu0") in p.series]
    assert len(cached) == 1 and len(covered_chunks(run)) > 1
    assert cached[0].series[("temperature_c", "gpu0")][0][0] == full[(("temperature_c", "gpu0"), 0)][0]
    temps = np.concatenate([s[("temperature_c", "gpu0")][1] for s in series])
    assert temps.max() == 99 and temps.min() == 1  # every spike stays
    newest = series[-1][("temperature_c", "gpu0")]
    np.testing.assert_array_equal(newest[0][-100:], full[(("temperature_c", "gpu0"), 0)][-100:])  # the end is raw

    short = telemetry_batch(gpu_lines(50))  # a short series is handed over whole
    assert len(at_screen_resolution(short, 0).parts[0].series[("temperature_c", "gpu0")][0]) == 50


def test_a_cache_another_writer_appended_to_is_read_again_not_overwritten(run):
    layout = RunDir(run)
    first, second = CacheWriter(run, min_bytes=SMALL), CacheWriter(run, min_bytes=SMALL)
    first.update()
    second.update()  # it sees the first's chunks and has nothing to add
    assert second.chunks == 0
    append_jsonl(layout.metrics, episodes(0, 100, step0=10**6))
    first.update()
    second.update()  # its view is stale: it reads the cache again instead of writing over the first's chunk
    assert second.chunks == 0
    _, got = open_run(run)
    assert_same(got, full_parse(run))
    assert json.loads(layout.metrics.read_text().splitlines()[-1])["kind"] == "episode"
