"""The cycle clock's arithmetic on a clock the test sets: phases, the heavy work timed aside, merged records and the
GPU's samples per phase (the real workers of ``test_time_split.py`` cover the rest; this machine has no GPU)."""

from __future__ import annotations

from core.util.jsonl import JsonlWriter, read_jsonl
from core.worker.cycle_clock import CycleClock


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_phase_its_seconds_heavy_work_aside_and_the_gpu_by_phase(tmp_path):
    out, clock = JsonlWriter(tmp_path / "metrics.jsonl"), Clock()
    cycles = CycleClock(out, interval_s=10.0, clock=clock)
    cycles.training_start()
    clock.now += 0.5  # learn()'s set-up: the first cycle's "other"
    cycles.rollout_start(0)
    cycles.gpu_sample(10.0)  # the telemetry thread, while collecting

    def checkpoint() -> None:
        clock.now += 1.0
        nested()  # the best checkpoint saved inside an evaluation counts once

    def nested() -> None:
        clock.now += 0.25

    clock.now += 2.0
    cycles.aside(checkpoint)()
    cycles.rollout_end()
    cycles.gpu_sample(90.0)
    cycles.gpu_sample(70.0)
    cycles.gpu_sample(None)  # NVML could not say: no sample
    clock.now += 3.0
    cycles.rollout_start(64)  # closes the first cycle: written at once (the first record comes without waiting)
    clock.now += 1.0
    cycles.rollout_end()
    clock.now += 1.0
    cycles.training_end(128)
    out.close()
    first, second = [r for r in read_jsonl(tmp_path / "metrics.jsonl") if r["kind"] == "cycle"]
    assert (first["n"], first["step"], second["n"], second["step"]) == (1, 64, 1, 128)
    assert first["collect_s"] == 2.0 and first["train_s"] == 3.0 and first["other_s"] == 1.75  # 0.5 + 1.25 aside
    assert first["gpu_collect_pct"] == 10.0 and first["gpu_train_pct"] == 80.0
    assert (second["collect_s"], second["train_s"], second["other_s"]) == (1.0, 1.0, 0.0)
    assert "gpu_train_pct" not in second  # no sample since the last record
    assert cycles.total.total_s == 8.75 and cycles.phase == "other"


def test_fast_cycles_are_merged_into_about_one_record_a_second_and_a_stop_mid_collection_is_collection(tmp_path):
    out, clock = JsonlWriter(tmp_path / "metrics.jsonl"), Clock()
    cycles = CycleClock(out, interval_s=1.0, clock=clock)
    cycles.training_start()
    for step in range(1000):  # train_freq 1: a cycle every step, 10 ms each
        cycles.rollout_start(step)
        clock.now += 0.006
        cycles.rollout_end()
        clock.now += 0.004
    cycles.rollout_start(1000)
    clock.now += 0.5
    cycles.training_end(1000)  # stopped while collecting
    out.close()
    recs = [r for r in read_jsonl(tmp_path / "metrics.jsonl") if r["kind"] == "cycle"]
    assert sum(r["n"] for r in recs) == 1001 and len(recs) <= 12
    assert abs(sum(r["collect_s"] for r in recs) - (6.0 + 0.5)) < 1e-3
    assert abs(sum(r["train_s"] for r in recs) - 4.0) < 1e-3
    assert all("gpu_collect_pct" not in r for r in recs)  # no sample: no GPU figure


def test_logger_dumps_and_checkpoints_are_timed_aside_through_their_hooks_a_dump_that_raised_too(tmp_path):
    from stable_baselines3.common.logger import KVWriter, Logger

    from core.worker.callbacks import logger_formats

    out, clock = JsonlWriter(tmp_path / "metrics.jsonl"), Clock()
    cycles = CycleClock(out, interval_s=10.0, clock=clock)

    class Format(KVWriter):  # SB3's own formats (csv, json, TensorBoard) writing a dump: 2 s, or 1 s and an error
        def __init__(self, fail: bool = False):
            self.fail = fail

        def write(self, key_values, key_excluded, step=0):
            clock.now += 1.0 if self.fail else 2.0
            if self.fail:
                raise ValueError("the dump failed")

        def close(self):
            pass

    logger = Logger(folder=None, output_formats=logger_formats(cycles, [Format()]))
    cycles.training_start()
    cycles.rollout_start(0)
    clock.now += 1.0
    cycles.rollout_end()
    logger.record("train/loss", 1.0)
    logger.dump(64)  # SB3 dumps between collecting and training: taken out of the training phase
    with cycles.timed_aside():  # the checkpointer's timed(): a save
        clock.now += 0.5
    clock.now += 1.0
    cycles.rollout_start(64)
    clock.now += 1.0
    cycles.rollout_end()
    failing = Logger(folder=None, output_formats=logger_formats(cycles, [Format(fail=True)]))
    failing.record("train/loss", float("nan"))
    try:
        failing.dump(128)
    except ValueError:
        pass
    cycles.training_end(128)  # the failed dump's second counts aside still
    out.close()
    first, second = [r for r in read_jsonl(tmp_path / "metrics.jsonl") if r["kind"] == "cycle"]
    assert (first["collect_s"], first["train_s"], first["other_s"]) == (1.0, 1.0, 2.5)
    assert (second["collect_s"], second["train_s"], second["other_s"]) == (1.0, 0.0, 1.0)
