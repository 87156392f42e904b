"""The estimate kept with a run, the last runs of a card read back, and the estimate's correction from them."""

from __future__ import annotations

import dataclasses
import json
import textwrap

from core.config.presets import resolve
from core.config.spaces import probe_spaces
from core.estimate.estimate import estimate
from core.estimate.gpus import get_profile, history_factor, history_text, with_history
from core.run.card_history import card_ratios
from core.run.layout import RunDir
from core.run.status import write_status
from core.run.summary import summarize
from core.util.files import read_json, write_json_atomic

MIB = 1 << 20
UUID = "GPU-fa4e0000-0000-4000-8000-000000000000"


def finished_run(runs, name, peak_mib, measure, uuid=UUID, estimate_mib=1000):
    """A run folder as the worker leaves it: its estimate in status.json (as core.worker.fit_record writes it),
    telemetry lines naming the measure of the run's own GPU memory, then summary.json written by summarize."""
    run = runs / name
    run.mkdir(parents=True)
    write_status(run, state="finished", estimate_gpu={"bytes": estimate_mib * MIB, "source": "the table for hopper",
                                                      "uuid": uuid, "gpu": "NVIDIA H100 80GB HBM3"})
    lines = [{"t": 1.0, "kind": "status", "nvml": True, "run_gpu": 0}] + [
        {"t": 1.0 + i, "gpu": 0, "memory_used_bytes": 1500 * MIB, "process_memory_bytes": (peak_mib - 5 * (i != 1)) * MIB,
         "process_memory_source": measure} for i in range(3)]
    (run / "telemetry.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    write_json_atomic(RunDir(run).summary, summarize(run))
    return run


def card(history=()):
    return dataclasses.replace(get_profile("H100 80GB"), detected=True, index=0, uuid=UUID, history=tuple(history))


def test_the_newest_runs_of_the_card_are_read_newest_first_of_one_whole_process_measure(tmp_path):
    finished_run(tmp_path, "20261120-010000-ppo-a", 950, "nvml")  # a telemetry.jsonl from before the measures had names
    finished_run(tmp_path, "20261121-010000-ppo-b", 2000, "nvml_process", uuid="GPU-other")
    finished_run(tmp_path, "20261122-010000-ppo-c", 1010, "nvml_process")
    finished_run(tmp_path, "20261123-010000-ppo-d", 550, "torch_reserved")  # the CUDA context not counted
    finished_run(tmp_path, "20261124-010000-ppo-e", 970, "nvml_process")
    unknown = finished_run(tmp_path, "20261125-010000-ppo-f", 1300, "nvml_process")
    summary = read_json(unknown / "summary.json")  # as a summary.json from before it named a measure
    write_json_atomic(unknown / "summary.json", {k: v for k, v in summary.items() if k != "gpu_memory_measure"})
    (tmp_path / ".queue").mkdir()
    assert read_json(tmp_path / "20261123-010000-ppo-d" / "summary.json")["peak_to_estimate"] == 0.55
    assert read_json(tmp_path / "20261120-010000-ppo-a" / "summary.json")["gpu_memory_measure"] == "nvml_process"
    assert card_ratios(tmp_path, UUID) == (0.97, 1.01, 0.95)
    assert card_ratios(tmp_path, UUID, last=2) == (0.97, 1.01)
    assert card_ratios(tmp_path, None) == () and card_ratios(tmp_path / "missing", UUID) == ()
    assert history_text(card((0.97, 1.01, 0.95))) == "last 3 runs: 0.95-1.01 of estimate"


def test_a_card_read_by_windows_counter_since_its_newest_run_is_never_mixed_with_nvml_or_torch_runs(tmp_path):
    """The same card, first on Linux (NVML per process), then under WDDM: its history is the WDDM runs' alone."""
    for day, peak in ((20, 1200), (21, 1250), (22, 1210)):
        finished_run(tmp_path, f"202611{day}-010000-ppo-linux", peak, "nvml_process")
    finished_run(tmp_path, "20261123-010000-ppo-win", 1100, "wddm_counter")
    finished_run(tmp_path, "20261124-010000-ppo-win", 640, "torch_reserved")  # the counter had not listed it yet
    finished_run(tmp_path, "20261125-010000-ppo-win", 1080, "wddm_counter")
    assert card_ratios(tmp_path, UUID) == (1.08, 1.1)
    assert history_factor(with_history(card(), card_ratios(tmp_path, UUID))) is None  # two runs are no history yet
    assert card_ratios(tmp_path, UUID, measure="nvml_process") == (1.21, 1.25, 1.2)
    assert card_ratios(tmp_path, UUID, measure="torch_reserved") == ()  # never compared with the whole process
    finished_run(tmp_path, "20261126-010000-ppo-win", 1040, "wddm_counter")
    wddm = with_history(card(), card_ratios(tmp_path, UUID))
    assert wddm.history == (1.04, 1.08, 1.1) and history_factor(wddm) == 1.08  # the median of the WDDM runs only


def test_runs_that_peaked_above_their_estimates_raise_it_and_lower_ones_do_not():
    cfg = resolve("heavy", {"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"device": "cuda"}}).config
    spaces = probe_spaces(cfg.env)
    plain = estimate(cfg, spaces, card(), 64 << 30, suggest=False, here=[card()])
    assert history_factor(card((1.2, 1.1))) is None  # two runs are not a history yet
    high = estimate(cfg, spaces, card((1.2, 1.1, 1.15, 0.9)), 64 << 30, suggest=False, here=[card()])
    fix = high.term("runs_correction")
    assert fix is not None and fix.bytes == int(0.125 * plain.gpu_bytes)  # the median of 1.2, 1.15, 1.1, 0.9
    assert high.gpu_bytes == plain.gpu_bytes + fix.bytes
    assert high.gpu_history == "last 4 runs: 0.90-1.20 of estimate"
    low = estimate(cfg, spaces, card((0.8, 0.85, 0.9)), 64 << 30, suggest=False, here=[card()])
    assert low.term("runs_correction") is None and low.gpu_bytes == plain.gpu_bytes
    assert with_history(get_profile("H100 80GB"), (1.5, 1.5, 1.5)).history == ()  # a plan for another machine


def test_the_worker_s_estimate_lands_in_the_summary_beside_the_peak(fake_nvml, tmp_path):
    """record_estimate with the real pynvml binding on the fake card, then summarize the folder."""
    fake_nvml.configure(name="NVIDIA H100 80GB HBM3", memory_total=85017493504, cc_major=9, cc_minor=0)
    run = tmp_path / "run"
    run.mkdir()
    (run / "status.json").write_text(json.dumps({"state": "finished", "id": "run"}))
    (run / "telemetry.jsonl").write_text(json.dumps({"kind": "status", "run_gpu": 0}) + "\n" + json.dumps(
        {"t": 1.0, "gpu": 0, "memory_used_bytes": 1500 * MIB, "process_memory_bytes": 982 * MIB}) + "\n")
    code = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from core.config.presets import resolve
        from core.config.spaces import probe_spaces
        from core.run.summary import summarize
        from core.worker.fit_record import record_estimate
        cfg = resolve("heavy", {{"algo": "PPO", "env": {{"id": "CartPole-v1"}}, "runtime": {{"device": "cuda"}}}}).config
        run = Path({str(run)!r})
        print(record_estimate(run, cfg, probe_spaces(cfg.env), 0))
        print(json.dumps(summarize(run)))
    """)
    done = fake_nvml.run_python(code, timeout=300)
    assert done.returncode == 0, done.stderr
    recorded, summary = done.stdout.strip().splitlines()[-2:]
    summary = json.loads(summary)
    assert int(recorded) == summary["estimate_gpu_bytes"] > 900 * MIB
    assert summary["gpu_uuid"] == UUID and summary["estimate_gpu_source"] == "the table for hopper"
    assert summary["peak_process_gpu_memory_bytes"] == 982 * MIB
    assert summary["peak_to_estimate"] == round(982 * MIB / int(recorded), 4)
