"""The estimate kept with a run, the last runs of a card read back, and the estimate's correction from them."""

from __future__ import annotations

import dataclasses
import json
import textwrap

from core.config.presets import resolve
from core.config.spaces import probe_spaces
from core.fit.estimate import estimate
from core.fit.gpus import get_profile, history_factor, history_text, with_history
from core.run.card_history import card_ratios

MIB = 1 << 20
UUID = "GPU-fa4e0000-0000-4000-8000-000000000000"


def write_run(runs, name, **summary):
    folder = runs / name
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(summary))


def card(history=()):
    return dataclasses.replace(get_profile("H100 80GB"), detected=True, index=0, uuid=UUID, history=tuple(history))


def test_the_newest_runs_of_the_card_are_read_newest_first(tmp_path):
    write_run(tmp_path, "20261120-010000-ppo-a", gpu_uuid=UUID, peak_to_estimate=0.95)
    write_run(tmp_path, "20261121-010000-ppo-b", gpu_uuid="GPU-other", peak_to_estimate=2.0)
    write_run(tmp_path, "20261122-010000-ppo-c", gpu_uuid=UUID, peak_to_estimate=1.01)
    write_run(tmp_path, "20261123-010000-ppo-d", gpu_uuid=UUID, peak_to_estimate=None)  # no NVML figure
    write_run(tmp_path, "20261124-010000-ppo-e", gpu_uuid=UUID, peak_to_estimate=0.97)
    (tmp_path / ".queue").mkdir()
    assert card_ratios(tmp_path, UUID) == (0.97, 1.01, 0.95)
    assert card_ratios(tmp_path, UUID, last=2) == (0.97, 1.01)
    assert card_ratios(tmp_path, None) == () and card_ratios(tmp_path / "missing", UUID) == ()
    assert history_text(card((0.97, 1.01, 0.95))) == "last 3 runs: 0.95-1.01 of estimate"


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
        from core.training.fit_record import record_estimate
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
