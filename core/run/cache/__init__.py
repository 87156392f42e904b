"""The column cache: a run's JSONL records as column batches in the run folder's ``cache/``, so that a first
open reads columns instead of parsing every line.

``columns`` (records -> column batches: what the window's plots take and the cache keeps), ``codec`` (a batch as
a cache chunk and back; merged, joined), ``history`` (``HistoryCache``: the chunks, each checked against its
source's bytes; torn, stale or CRC-failing chunks cut off and parsed again), ``writer`` (``CacheWriter``: the
worker's thread that keeps ``cache/`` up with the JSONL files).

Not here: the JSONL records themselves (``core.run.records``); who reads the cache (``app.monitor.follower``)."""
