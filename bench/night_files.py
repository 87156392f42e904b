"""Bytes per hour of each growing file of a run folder, measured on a real run.

Trains ``--algo`` (PPO) on CartPole-v1 (or ``--env fast``: episodes of 2 steps) for ``--seconds``
of wall time with telemetry at 5 Hz (the test suite's fake NVML, one GPU, when ``--fake-nvml`` is
given, else whatever NVML the machine has), then reports, per hour of training at the speed this machine reached:

- ``metrics.jsonl`` after (as written: episodes past ``EPISODES_PER_S`` aggregated) and before (the
  same run with one record per episode, as the worker wrote it until the bound: the episodes of
  the run's Monitor CSVs put back in place of each aggregate, and a train record per logger dump of
  SB3's ``progress.json``), and the bytes of each record kind;
- ``telemetry.jsonl``: at full rate, and after thinning (what an hour older than an hour costs);
- ``worker.log``: the worker's and its supervisor's lines; bounded at 2 x 16 MiB by rotation.

Then a 24 h run's files at those rates. ``--open-day`` writes a 24 h metrics.jsonl at the bound's
worst case and reads it as the window's follower does (chunks -> columns): its size and CPU time.

    python bench/night_files.py --seconds 60 [--fake-nvml] [--algo DQN] [--env fast]
    python bench/night_files.py --open-day
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MIB = 2**20


FAST_ENV = {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv", "info_keys": ["moves"]}


def line_bytes(rec: dict) -> int:
    """What ``JsonlWriter`` writes for ``rec`` (its separators; one newline)."""
    return len(json.dumps(rec, separators=(",", ":"), default=float).encode()) + 1


def monitor_episodes(folder: Path) -> list[tuple[float, float, int]]:
    """(t, reward, length) of every episode in the run's Monitor CSVs, by time."""
    rows = []
    for path in sorted(folder.glob("*.csv")):
        with path.open(encoding="utf-8") as fh:
            fh.readline()  # Monitor's JSON header
            for row in csv.DictReader(fh):
                rows.append((float(row["t"]), float(row["r"]), int(row["l"])))
    return sorted(rows)


def before_bytes(recs: list[dict], monitor: list[tuple[float, float, int]]) -> tuple[int, int]:
    """The bytes metrics.jsonl would hold with one record per episode, and the episodes put back:
    each aggregate of n replaced by the next n Monitor episodes as episode records (its step and t)."""
    from core.run import records

    size, used = 0, 0
    for rec in recs:
        if rec.get("kind") != records.EPISODES:
            size += line_bytes(rec)
            continue
        for _ in range(int(rec["n"])):
            _, reward, length = monitor[used] if used < len(monitor) else (0.0, rec["reward"], int(rec["length"]))
            size += line_bytes(records.episode(rec["step"], reward, length, rec["t"], rec.get("m")))
            used += 1
    return size, used


def open_day(folder: Path) -> None:
    """A 24 h metrics.jsonl at the bound's worst case (each second: ``EPISODES_PER_S`` episode records,
    one aggregate, one progress, one train record of 8 values), read the way the window's follower
    reads it (chunks, well-formed records, columns): its size, and the CPU time of that reading."""
    from app.monitor.follower import CHUNK_BYTES
    from core.run import records
    from core.run.cache.columns import metrics_batch
    from core.run.episodes import EPISODES_PER_S
    from core.run.records import well_formed_only
    from core.util.jsonl import JsonlReader

    path = folder / "day-metrics.jsonl"
    t0, step, per_s = 1.7e9, 0, int(EPISODES_PER_S)
    with path.open("w", encoding="utf-8") as fh:
        for second in range(24 * 3600):
            t = t0 + second
            eps = [records.episode(step + 40 * i, 20.0 + (i * 7 + second) % 13, 40, t + i / per_s, {"co2_kg": 0.25 * i})
                   for i in range(per_s)]
            step += 40 * per_s
            burst = [records.episode(step + i, 3.0 + i % 5, 2, t, {"co2_kg": 0.1}) for i in range(40)]
            out = [*eps, records.episodes(burst), {**records.progress(step + 40, 1000.0, 10**9), "t": t}]
            out.append({**records.train(step, {f"train/loss_{k}": 0.123456 * k for k in range(8)}), "t": t})
            fh.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in out))
            step += 40
    size = path.stat().st_size
    reader = JsonlReader(path)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    n = points = batches = 0
    while raw := reader.read_new(CHUNK_BYTES):
        batch = metrics_batch(well_formed_only(raw))
        n += len(raw)
        batches += 1
        points += sum(len(p.episodes[0]) for p in batch.parts if p.episodes is not None)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(f"a 24 h metrics.jsonl at the bound: {size / MIB:,.0f} MiB, {n:,} records in {batches:,} chunks of "
          f"{CHUNK_BYTES / MIB:g} MiB -> {points:,} reward points; read into columns in {cpu:.1f} s CPU ({wall:.1f} s wall)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--algo", default="PPO", help="PPO (default) or an off-policy one: DQN dumps its losses per episode")
    parser.add_argument("--env", choices=("cartpole", "fast"), default="cartpole",
                        help="CartPole-v1, or the test suite's env of 2-step episodes (hundreds of episodes a second)")
    parser.add_argument("--fake-nvml", action="store_true", help="one GPU from the test suite's fake NVML (Linux, gcc)")
    parser.add_argument("--open-day", action="store_true",
                        help="only write a 24 h metrics.jsonl at the bound and read it the way the window does")
    args = parser.parse_args()
    if args.open_day:
        with tempfile.TemporaryDirectory() as tmp:
            open_day(Path(tmp))
        return 0
    from core.config.validate import validate_config
    from core.launch.control import launch_worker, request_stop
    from core.run.episodes import EPISODES_PER_S
    from core.run.layout import RunDir
    from core.run.status import read_status
    from core.run.store import RunStore
    from core.telemetry.thinning import thin_telemetry
    from core.util.jsonl import read_jsonl

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        env = FAST_ENV if args.env == "fast" else {"id": "CartPole-v1"}
        cfg = validate_config({"algo": args.algo, "env": env, "runtime": {"n_envs": 4, "telemetry_hz": 5},
                               "budget": {"total_timesteps": 100_000_000, "checkpoint_every": 10_000_000}}).config
        run = RunStore(Path(tmp) / "runs").create(cfg)
        extra = None
        if args.fake_nvml:
            from tests.fakenvml import FakeNvml, compile_fake_nvml

            fake = FakeNvml(compile_fake_nvml(Path(tmp) / "nvml"), Path(tmp) / "nvml.cfg")
            extra = {k: fake.env()[k] for k in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG")}
        proc = launch_worker(run, reap=False, extra_env=extra)
        while read_status(run).get("state") != "running":
            time.sleep(0.2)
        started = time.time()
        cpu0 = os.times()
        time.sleep(args.seconds)
        request_stop(run)
        proc.wait(300)
        wall = max(time.time() - started, 1e-9)
        cpu = os.times()
        layout = RunDir(run)
        recs = list(read_jsonl(layout.metrics))
        steps = max((r.get("step", 0) for r in recs), default=0)
        per_hour = 3600.0 / wall
        copy = Path(tmp) / "telemetry-thinned.jsonl"
        shutil.copyfile(layout.telemetry, copy)
        thin_telemetry(copy, time.time() + 1)  # everything "older than an hour": the thinned rate
        monitor = monitor_episodes(layout.monitor)
        before, episodes = before_bytes(recs, monitor)
        # every logger dump was a train record before: SB3's progress.json has a line per dump
        dumps = sum(1 for p in layout.sb3_logs.glob("progress*.json") for _ in p.open(encoding="utf-8"))
        train = [line_bytes(r) for r in recs if r.get("kind") == "train"]
        if train and dumps > len(train):
            before += (dumps - len(train)) * sum(train) // len(train)
        after = layout.metrics.stat().st_size
        by_kind: Counter[str] = Counter()
        count: Counter[str] = Counter()
        for rec in recs:
            by_kind[str(rec.get("kind"))] += line_bytes(rec)
            count[str(rec.get("kind"))] += 1
        child_cpu = (cpu.children_user + cpu.children_system) - (cpu0.children_user + cpu0.children_system)
        print(f"{args.algo} {args.env}: {steps:,} steps in {wall:.0f} s wall ({steps / wall:,.0f} steps/s), "
              f"{len(monitor):,} episodes ({len(monitor) / wall:,.1f}/s, bound {EPISODES_PER_S:g}/s), "
              f"worker CPU {child_cpu:.0f} s")
        rows = [("metrics.jsonl before", before), ("metrics.jsonl after", after),
                ("telemetry.jsonl (5 Hz)", layout.telemetry.stat().st_size),
                ("telemetry.jsonl thinned", copy.stat().st_size), ("worker.log", layout.worker_log.stat().st_size)]
        for name, size in rows:
            print(f"{name:<26} {size * per_hour / MIB:8.2f} MiB/hour   ({size:,} bytes measured)")
        print(f"metrics.jsonl after/before: {after / max(before, 1):.3f} (put back for 'before': {episodes:,} episodes, "
              f"{max(dumps - len(train), 0):,} train records)")
        first_agg = next((r["t"] for r in recs if r.get("kind") == "episodes"), None)
        last_t = max((r["t"] for r in recs if isinstance(r.get("t"), int | float)), default=0.0)
        if first_agg is not None and last_t - first_agg > 10:  # past the burst: the rate a long night keeps
            steady = sum(line_bytes(r) for r in recs if isinstance(r.get("t"), int | float) and r["t"] > first_agg)
            print(f"metrics.jsonl after, from the first aggregate on ({last_t - first_agg:.0f} s): "
                  f"{steady * 3600 / (last_t - first_agg) / MIB:.2f} MiB/hour")
        print("metrics.jsonl after, by record kind:")
        for kind, size in by_kind.most_common():
            print(f"  {kind:<10} {count[kind]:>8,} records {size * per_hour / MIB:8.2f} MiB/hour")
        day = 24 * per_hour
        metrics_day = after * day
        telemetry_day = (layout.telemetry.stat().st_size * per_hour + copy.stat().st_size * (24 - 1) * per_hour)
        print(f"a 24 h run at these rates: metrics.jsonl {metrics_day / MIB:,.0f} MiB (before: {before * day / MIB:,.0f} MiB), "
              f"telemetry.jsonl {telemetry_day / MIB:,.0f} MiB, worker.log at most 32 MiB; "
              f"opening it reads {(metrics_day + telemetry_day) / MIB:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
