"""Telemetry through the real pynvml binding: a fake libnvidia-ml.so.1 in a subprocess, or none at all.

No mocks of pynvml: every NVML test runs a subprocess with the compiled fake on LD_LIBRARY_PATH
(tests/fakenvml.py); the pytest process itself never loads NVML.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.telemetry.nvml import LIBRARY_NOT_FOUND
from core.telemetry.recorder import TelemetryRecorder
from core.telemetry.summary import telemetry_summary
from core.telemetry.thinning import thin_telemetry
from tests.fakenvml import REPO, FakeNvml

TWO_GPUS = {
    "count": 2, "driver_version": "551.86", "name": "NVIDIA GeForce RTX 4060 Laptop GPU", "gpu1.name": "Tesla T4",
    "memory_total": 8 << 30, "memory_used": 3 << 30, "gpu1.memory_total": 16 << 30, "gpu1.memory_used": 1 << 30,
    "temperature": 61, "gpu1.temperature": 44, "temperature_slowdown": 87, "util_gpu": 87, "util_memory": 40, "power_mw": 85250,
    "power_limit_mw": 115000, "sm_clock": 1800, "fan": 45, "cc_major": 8, "cc_minor": 9, "gpu1.cc_major": 7,
    "gpu1.cc_minor": 5,
}

SAMPLE_SCRIPT = """
import json, os, sys
from core.telemetry import nvml as T
from core.machine.doctor import doctor_gpu_lines
print(json.dumps({"status": T.nvml_status()._asdict(), "gpus": [g._asdict() for g in T.detect_gpus()],
                  "samples": [s._asdict() for s in T.GpuSampler().sample()],
                  "doctor": doctor_gpu_lines()}))
"""

CLI = "import sys; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"


def sample_with(fake: FakeNvml, readings: dict) -> dict:
    fake.configure(readings)
    out = fake.run_python(SAMPLE_SCRIPT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def cli(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


# --- the sampler through the fake library ------------------------------------------------------

def test_sampler_returns_the_libraries_readings(fake_nvml):
    data = sample_with(fake_nvml, TWO_GPUS)
    assert data["status"] == {"available": True, "reason": None, "driver_version": "551.86", "device_count": 2}
    assert data["gpus"] == [
        {"index": 0, "name": "NVIDIA GeForce RTX 4060 Laptop GPU", "memory_total_bytes": 8 << 30,
         "compute_capability": [8, 9]},
        {"index": 1, "name": "Tesla T4", "memory_total_bytes": 16 << 30, "compute_capability": [7, 5]},
    ]
    first, second = data["samples"]
    assert first["index"] == 0 and second["index"] == 1
    assert first["name"] == "NVIDIA GeForce RTX 4060 Laptop GPU"
    assert first["memory_used_bytes"] == 3 << 30 and first["memory_total_bytes"] == 8 << 30
    assert first["temperature_c"] == 61 and second["temperature_c"] == 44
    assert first["temperature_slowdown_c"] == 87 == second["temperature_slowdown_c"]  # NVML's slowdown threshold
    assert first["utilization_pct"] == 87 and first["memory_utilization_pct"] == 40
    assert first["power_w"] == pytest.approx(85.25) and first["power_limit_w"] == pytest.approx(115.0)
    assert first["sm_clock_mhz"] == 1800 and first["fan_pct"] == 45
    assert second["memory_used_bytes"] == 1 << 30 and second["memory_total_bytes"] == 16 << 30
    # without pids there is no per-process figure, and nothing pretends there is
    assert first["process_memory_bytes"] is None and first["process_memory_source"] is None
    assert data["doctor"][0] == "NVML available: driver 551.86, 2 GPU(s)"
    assert "GPU 0: NVIDIA GeForce RTX 4060 Laptop GPU, 8.0 GiB, compute capability 8.9" in data["doctor"][1]
    assert "temp 61 C" in data["doctor"][1] and "power 85.2 W of 115 W" in data["doctor"][1]


def test_a_reading_that_is_not_supported_is_none_and_the_others_still_read(fake_nvml):
    data = sample_with(fake_nvml, {**TWO_GPUS, "not_supported": "temperature,fan,temperature_threshold",
                                   "gpu1.fail.power": 15, "gpu1.fail.utilization": 999})
    first, second = data["samples"]
    assert first["temperature_c"] is None and first["fan_pct"] is None and first["temperature_slowdown_c"] is None
    assert second["temperature_slowdown_c"] is None
    assert first["power_w"] == pytest.approx(85.25) and first["utilization_pct"] == 87
    assert first["memory_used_bytes"] == 3 << 30 and first["sm_clock_mhz"] == 1800
    assert second["power_w"] is None and second["utilization_pct"] is None
    assert second["memory_utilization_pct"] is None
    assert second["memory_used_bytes"] == 1 << 30 and second["power_limit_w"] == pytest.approx(115.0)
    assert "temp n/a" in data["doctor"][1] and "fan n/a" in data["doctor"][1]


def test_a_gpu_without_compute_capability_is_still_detected(fake_nvml):
    data = sample_with(fake_nvml, {"not_supported": "compute_capability"})
    assert data["gpus"] == [{"index": 0, "name": "Fake GPU", "memory_total_bytes": 8 << 30,
                             "compute_capability": None}]


@pytest.mark.parametrize(("code", "reason"), [
    (9, "NVIDIA driver not loaded"),
    (18, "NVIDIA driver/library version mismatch"),
    (999, "NVML init failed: Unknown Error"),
])
def test_init_failure_is_kept_with_its_reason(fake_nvml, code, reason):
    data = sample_with(fake_nvml, {"init_error": code})
    assert data["status"]["available"] is False
    assert data["status"]["reason"].startswith(reason)
    assert data["gpus"] == [] and data["samples"] == []
    assert data["doctor"] == [f"NVML not available: {data['status']['reason']}"]


PROCESS_SCRIPT = """
import json, os, sys
from pathlib import Path
me = os.getpid()
Path(os.environ["FAKE_NVML_CONFIG"]).write_text(sys.argv[1].replace("ME", str(me)).replace(";", "\\n") + "\\n")
from core.telemetry import nvml as T
torch = (lambda: 777_000) if sys.argv[2] == "torch" else None
s = T.GpuSampler(torch_memory=torch).sample({me})[0]
print(json.dumps([s.process_memory_bytes, s.process_memory_source]))
"""


@pytest.mark.parametrize(("procs", "torch", "expected"), [
    ("ME:5000000,1:9999", "none", [5000000, "nvml_process"]),  # only this process tree counts
    ("1:9999", "none", [0, "nvml_process"]),                   # listed GPU processes, none of them ours
    ("ME:na", "none", [None, None]),                           # WDDM: listed without a figure, no torch
    ("ME:na", "torch", [777000, "torch_reserved"]),            # WDDM, not Windows: the worker's torch figure
    ("1:9999", "torch", [777000, "torch_reserved"]),           # container pid namespace: torch knows better
])
def test_process_memory_comes_from_nvml_else_torch(fake_nvml, procs, torch, expected):
    out = fake_nvml.run_python(PROCESS_SCRIPT, f"procs={procs}", torch)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == expected


# --- no NVML library at all (the normal state of a machine without an NVIDIA driver) ----------

def test_without_nvml_the_status_says_why(no_nvml_env):
    out = subprocess.run([sys.executable, "-c", SAMPLE_SCRIPT], env=no_nvml_env, cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == {"available": False, "reason": LIBRARY_NOT_FOUND, "driver_version": None,
                              "device_count": 0}
    assert data["gpus"] == [] and data["samples"] == []
    assert data["doctor"] == [f"NVML not available: {LIBRARY_NOT_FOUND}"]


def test_importing_telemetry_loads_neither_pynvml_nor_torch(no_nvml_env):
    code = ("import sys, core.telemetry.nvml, core.telemetry.recorder, core.cli.monitor; "
            "print(sorted(m for m in ('pynvml', 'torch', 'PySide6') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env=no_nvml_env, cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_monitor_without_nvml_says_so_and_exits_0(no_nvml_env):
    out = cli(["monitor", "--count", "1"], no_nvml_env)
    assert out.returncode == 0
    assert out.stdout == ""
    assert out.stderr.strip() == f"rlpanel monitor: NVML not available: {LIBRARY_NOT_FOUND}"
    out = cli(["monitor", "--count", "1", "--json"], no_nvml_env)
    assert out.returncode == 0 and json.loads(out.stdout) == []


def test_doctor_without_nvml_says_so(no_nvml_env):
    out = cli(["doctor"], no_nvml_env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"not available: {LIBRARY_NOT_FOUND}" in out.stdout


# --- rlpanel monitor through the fake library ------------------------------------------------

def test_monitor_csv_holds_the_readings(fake_nvml, tmp_path):
    fake_nvml.configure({**TWO_GPUS, "not_supported": "fan"})
    target = tmp_path / "gpu.csv"
    out = cli(["monitor", "--interval", "0.05", "--count", "3", "--csv", str(target)], fake_nvml.env())
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert len(rows) == 6  # 3 ticks x 2 GPUs
    assert [r["index"] for r in rows] == ["0", "1"] * 3
    first = rows[0]
    assert first["name"] == "NVIDIA GeForce RTX 4060 Laptop GPU"
    assert int(first["memory_used_bytes"]) == 3 << 30 and int(first["temperature_c"]) == 61
    assert float(first["power_w"]) == pytest.approx(85.25) and int(first["sm_clock_mhz"]) == 1800
    assert first["fan_pct"] == ""  # not available: empty, never a made-up number
    assert rows[1]["name"] == "Tesla T4" and int(rows[1]["temperature_c"]) == 44
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["time", "gpu", "name"]
    assert len(lines) == 1 + 6
    assert "61 C" in lines[1] and "87 %" in lines[1] and "n/a" in lines[1] and "85.2 / 115 W" in lines[1]


def test_monitor_json_is_one_document(fake_nvml):
    fake_nvml.configure(TWO_GPUS)
    out = cli(["monitor", "--interval", "0.05", "--count", "2", "--json"], fake_nvml.env())
    assert out.returncode == 0, out.stderr
    samples = json.loads(out.stdout)
    assert [s["index"] for s in samples] == [0, 1, 0, 1]
    assert samples[0]["temperature_c"] == 61 and samples[1]["name"] == "Tesla T4"


@pytest.mark.parametrize(("args", "words"), [
    (["--interval", "0"], "--interval 0 is too short"),
    (["--count", "0"], "--count 0 must be at least 1"),
    (["--duration", "-1"], "--duration -1 must be more than 0"),
])
def test_monitor_refuses_bad_input_in_one_line(no_nvml_env, args, words):
    out = cli(["monitor", *args], no_nvml_env)
    assert out.returncode != 0
    assert len(out.stderr.strip().splitlines()) == 1 and words in out.stderr


def test_monitor_does_not_overwrite_a_csv_without_asking(no_nvml_env, tmp_path):
    target = tmp_path / "mine.csv"
    target.write_text("precious\n")
    out = cli(["monitor", "--count", "1", "--csv", str(target)], no_nvml_env)
    assert out.returncode != 0 and "--overwrite" in out.stderr
    assert target.read_text() == "precious\n"


# --- the recorder --------------------------------------------------------------------------------

RECORDER_SCRIPT = """
import json, os, sys, time
from pathlib import Path
from core.telemetry.recorder import TelemetryRecorder
run_dir, hz, seconds = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
path = run_dir / "telemetry.jsonl"
rec = TelemetryRecorder(path, hz, torch_memory=lambda: 123_000_000)
start = time.monotonic()
rec.start()
sizes = set()
while time.monotonic() - start < seconds:
    sizes.add(path.stat().st_size if path.exists() else 0)
    time.sleep(0.01)
rec.stop()
elapsed = time.monotonic() - start
print(json.dumps({"elapsed": elapsed, "ticks": rec.ticks, "flushes": rec.flushes, "sizes": len(sizes),
                  "error": rec.error, "cpu": rec.thread_cpu_s}))
"""


def record(env: dict[str, str], run_dir: Path, hz: float, seconds: float) -> dict:
    out = subprocess.run([sys.executable, "-c", RECORDER_SCRIPT, str(run_dir), str(hz), str(seconds)],
                         env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_recorder_writes_at_the_configured_rate_in_batches(fake_nvml, tmp_path):
    fake_nvml.configure({**TWO_GPUS, "not_supported": "fan", "procs": "1:5"})
    stats = record(fake_nvml.env(), tmp_path, hz=10, seconds=3)
    assert stats["error"] is None
    records = [json.loads(line) for line in (tmp_path / "telemetry.jsonl").read_text().splitlines()]
    status, samples = records[0], records[1:]
    assert status["kind"] == "status" and status["nvml"] is True and status["driver_version"] == "551.86"
    assert status["gpus"] == ["NVIDIA GeForce RTX 4060 Laptop GPU", "Tesla T4"]
    expected = 10 * stats["elapsed"]
    ticks = len(samples) // 2
    assert len(samples) == 2 * stats["ticks"]  # every tick reached the file, one line per GPU
    assert 0.6 * expected <= ticks <= expected + 2
    # batched: the file grew about once a second, not once per tick
    assert stats["flushes"] <= stats["elapsed"] + 2 and stats["sizes"] <= stats["elapsed"] + 3
    assert stats["flushes"] < ticks / 3
    first = samples[0]
    assert [s["gpu"] for s in samples[:4]] == [0, 1, 0, 1]
    assert first["memory_used_bytes"] == 3 << 30 and first["temperature_c"] == 61
    assert first["temperature_slowdown_c"] == 87  # recorded beside each reading (the plots draw it)
    assert first["power_w"] == pytest.approx(85.25) and first["fan_pct"] is None
    assert first["rss_bytes"] > 10 << 20
    # the run's own memory (PSS: a lone process holds some of its pages with others) on the first tick's lines,
    # then every second or more: never as often as the RSS sum
    assert first["host_memory_measure"] == samples[1]["host_memory_measure"] == "pss"
    assert 0 < first["host_memory_bytes"] == samples[1]["host_memory_bytes"] < first["rss_bytes"]
    own = [s for s in samples if "host_memory_bytes" in s]
    assert 2 <= len(own) <= len(samples) / 5
    # NVML lists GPU processes but not this one; torch's figure is used for GPU 0 and said so
    assert (first["process_memory_bytes"], first["process_memory_source"]) == (123_000_000, "torch_reserved")
    assert (samples[1]["process_memory_bytes"], samples[1]["process_memory_source"]) == (0, "nvml_process")
    times = [s["t"] for s in samples[::2]]
    assert times == sorted(times)
    summary = telemetry_summary(tmp_path / "telemetry.jsonl")
    assert summary["peak_gpu_memory_bytes"] == 3 << 30
    assert summary["peak_temperature_c"] == 61
    assert summary["mean_utilization_pct"] == 87
    assert summary["peak_process_gpu_memory_bytes"] == 123_000_000
    assert summary["peak_rss_bytes"] == max(s["rss_bytes"] for s in samples)
    assert summary["peak_host_memory_bytes"] == max(s["host_memory_bytes"] for s in own)
    assert summary["host_memory_measure"] == "pss"
    # the run's own GPU memory leads, and says where it came from
    keys = list(summary)
    assert keys.index("peak_process_gpu_memory_bytes") < keys.index("peak_gpu_memory_bytes")
    assert summary["gpu_memory_measure"] == "torch_reserved"


def test_recorder_picks_up_changed_readings(fake_nvml, tmp_path):
    """The peak of a burst is in the file: the fake's readings change while the recorder runs."""
    fake_nvml.configure({"temperature": 50})
    # the new reading replaces the file once, atomically (rewriting it in place would let the
    # library read it empty, and an empty file means the default temperature)
    code = RECORDER_SCRIPT.replace("    time.sleep(0.01)\n", "    time.sleep(0.01)\n"
                                   "    if time.monotonic() - start > 1 and 'changed' not in globals():\n"
                                   "        changed = Path(os.environ['FAKE_NVML_CONFIG'])\n"
                                   "        changed.with_suffix('.new').write_text('temperature=83\\n')\n"
                                   "        os.replace(changed.with_suffix('.new'), changed)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path), "10", "2.5"], env=fake_nvml.env(),
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    temps = [s.get("temperature_c") for s in map(json.loads, (tmp_path / "telemetry.jsonl").read_text().splitlines())
             if "kind" not in s]
    assert temps[0] == 50 and temps[-1] == 83
    assert telemetry_summary(tmp_path / "telemetry.jsonl")["peak_temperature_c"] == 83


def test_recorder_without_nvml_writes_host_lines_and_the_reason_once(no_nvml_env, tmp_path):
    stats = record(no_nvml_env, tmp_path, hz=10, seconds=1.5)
    assert stats["error"] is None
    records = [json.loads(line) for line in (tmp_path / "telemetry.jsonl").read_text().splitlines()]
    assert records[0]["kind"] == "status" and records[0]["nvml"] is False
    assert records[0]["reason"] == LIBRARY_NOT_FOUND
    assert sum(1 for r in records if r.get("kind") == "status") == 1
    samples = records[1:]
    assert len(samples) == stats["ticks"] and stats["ticks"] >= 5
    assert all(s["gpu"] is None and s["rss_bytes"] > 0 for s in samples)
    summary = telemetry_summary(tmp_path / "telemetry.jsonl")
    assert summary["peak_gpu_memory_bytes"] is None and summary["peak_temperature_c"] is None
    assert summary["peak_rss_bytes"] > 0 and summary["nvml_reason"] == LIBRARY_NOT_FOUND


@pytest.mark.parametrize("hz", [-1, 51, float("nan")])
def test_recorder_refuses_a_bad_rate(tmp_path, hz):
    with pytest.raises(ValueError, match="runtime.telemetry_hz"):
        TelemetryRecorder(tmp_path / "telemetry.jsonl", hz)


def test_recorder_at_zero_hz_records_nothing(tmp_path):
    rec = TelemetryRecorder(tmp_path / "telemetry.jsonl", 0)
    rec.start()
    rec.stop()
    assert not (tmp_path / "telemetry.jsonl").exists()


# --- thinning and the summary --------------------------------------------------------------------

def synthetic_run(path: Path, seconds: int, hz: int = 5, t0: float = 1_000_000.0) -> list[dict]:
    records = [{"t": t0 - 1, "kind": "status", "nvml": True, "reason": None}]
    for i in range(seconds * hz):
        records.append({"t": round(t0 + i / hz, 3), "gpu": 0, "memory_used_bytes": (1 << 30) + 1000 * (i % 13),
                        "memory_total_bytes": 8 << 30, "temperature_c": 60 + (i % 5), "utilization_pct": (i * 37) % 101,
                        "memory_utilization_pct": 10, "power_w": 80.5 + (i % 3), "power_limit_w": 115.0,
                        "sm_clock_mhz": 1800, "fan_pct": None, "process_memory_bytes": 500_000_000 + i,
                        "process_memory_source": "nvml", "rss_bytes": 2_000_000_000 + (i % 11), "cpu_pct": 25.0,
                        "process_cpu_pct": 110.0})
        if i % 7 == 0:  # the run's own memory, read every few ticks
            records[-1].update(host_memory_bytes=900_000_000 + (i % 13), host_memory_measure="pss")
    records.append({"t": t0 + 50, "gpu": 0, "utilization_pct": 100, "temperature_c": 90,
                    "memory_used_bytes": 7 << 30})  # a one-sample burst in the old part
    records.sort(key=lambda r: r["t"])
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    return records


def test_thinning_keeps_peaks_and_recent_samples_and_shrinks_the_file(tmp_path):
    path = tmp_path / "telemetry.jsonl"
    synthetic_run(path, seconds=600)
    before, size_before = telemetry_summary(tmp_path / "telemetry.jsonl"), path.stat().st_size
    folded = thin_telemetry(path, older_than_t=1_000_000.0 + 300)
    after = [json.loads(line) for line in path.read_text().splitlines()]
    assert folded == 300 * 5 + 1
    assert after[0]["kind"] == "status"
    aggs = [r for r in after if r.get("kind") == "agg"]
    assert len(aggs) == 300 and all(a["dt"] == 1 for a in aggs)
    assert sum(a["n"] for a in aggs) == folded
    assert len([r for r in after if "kind" not in r]) == 300 * 5  # the recent part is untouched
    burst = next(a for a in aggs if a["t"] == 1_000_050)
    assert burst["temperature_c_max"] == 90 and burst["utilization_pct_max"] == 100
    assert burst["memory_used_bytes_max"] == 7 << 30
    assert path.stat().st_size < 0.8 * size_before
    summary = telemetry_summary(tmp_path / "telemetry.jsonl")
    assert summary["peak_temperature_c"] == before["peak_temperature_c"] == 90
    assert summary["peak_gpu_memory_bytes"] == 7 << 30
    assert summary["peak_rss_bytes"] == before["peak_rss_bytes"]
    assert summary["peak_host_memory_bytes"] == before["peak_host_memory_bytes"] == 900_000_012
    assert summary["host_memory_measure"] == "pss"
    assert all(("host_memory_bytes" in a) == ("host_memory_measure" in a) for a in aggs)
    assert 0 < sum("host_memory_bytes" in a for a in aggs) < len(aggs)  # a second without a read leaves it out
    assert summary["peak_process_gpu_memory_bytes"] == before["peak_process_gpu_memory_bytes"]
    assert summary["mean_utilization_pct"] == pytest.approx(before["mean_utilization_pct"], abs=0.2)
    assert summary["telemetry_samples"] == before["telemetry_samples"]
    assert thin_telemetry(path, older_than_t=1_000_000.0 + 300) == 0  # idempotent


def test_twelve_hours_at_5_hz_stay_under_50_mb(tmp_path):
    """Size per second of thinned and full-rate history, extrapolated to a 12 h run on one GPU."""
    path = tmp_path / "telemetry.jsonl"
    synthetic_run(path, seconds=200)
    full_per_s = path.stat().st_size / 200
    thin_telemetry(path, older_than_t=1_000_000.0 + 1_000)
    agg_per_s = path.stat().st_size / 200
    # the recorder thins hourly keeping the last hour: at most 2 h at full rate, the rest thinned
    assert 10 * 3600 * agg_per_s + 2 * 3600 * full_per_s < 50e6


def test_summary_without_data_is_none(tmp_path):
    summary = telemetry_summary(tmp_path / "telemetry.jsonl")
    for key in ("peak_gpu_memory_bytes", "peak_process_gpu_memory_bytes", "peak_temperature_c",
                "mean_utilization_pct", "peak_rss_bytes", "peak_host_memory_bytes", "host_memory_measure"):
        assert summary[key] is None


def test_telemetry_recorded_before_own_memory_reads_as_its_rss_sum(tmp_path):
    path = tmp_path / "telemetry.jsonl"
    records = synthetic_run(path, seconds=3)
    old = [{k: v for k, v in r.items() if not k.startswith("host_memory")} for r in records]
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    summary = telemetry_summary(path)
    assert summary["peak_host_memory_bytes"] == summary["peak_rss_bytes"] == 2_000_000_010
    assert summary["host_memory_measure"] == "rss"


def test_host_memory_peak_reads_old_and_new_summaries():
    from core.telemetry.host import HostMemory
    from core.telemetry.summary import host_memory_peak, memory_lines

    old = {"peak_rss_bytes": 3254 * 2**20, "peak_gpu_memory_bytes": 1462 * 2**20, "peak_process_gpu_memory_bytes": 982 * 2**20}
    assert host_memory_peak(old) == HostMemory(3254 * 2**20, "rss")
    assert memory_lines(old) == [
        "peak GPU memory, this run: 982 MiB (its own processes, the figure's measure unknown)",
        "peak GPU memory, whole card: 1,462 MiB (the card's total used, other programs and the driver's reserve included)",
        "peak host memory, this run: 3,254 MiB (RSS sum: shared pages counted once per process)"]
    new = {**old, "peak_host_memory_bytes": 1630 * 2**20, "host_memory_measure": "pss", "process_gpu_memory_source": "nvml"}
    assert host_memory_peak(new) == HostMemory(1630 * 2**20, "pss")
    assert memory_lines(new)[0] == "peak GPU memory, this run: 982 MiB (its own processes, NVML's per-process figure)"
    assert memory_lines(new)[2] == "peak host memory, this run: 1,630 MiB (PSS)"
    # a summary from before the measures had names says "torch" in its older field; a new one names the measure
    older_torch = {**old, "process_gpu_memory_source": "torch"}
    assert memory_lines(older_torch)[0] == ("peak GPU memory, this run: 982 MiB (torch's reserved memory: the CUDA "
                                            "context (~0.7 GiB) not included, no per-process figure from NVML or Windows)")
    wddm = {**old, "gpu_memory_measure": "wddm_counter"}
    assert memory_lines(wddm)[0] == ("peak GPU memory, this run: 982 MiB (its own processes, Windows' GPU Process Memory "
                                     "counter (Task Manager's dedicated GPU memory): NVML has no per-process figure under WDDM)")
    assert host_memory_peak({"peak_host_memory_bytes": "1 GB"}) is None and memory_lines({}) == []


def test_summary_ignores_a_torn_last_line(tmp_path):
    path = tmp_path / "telemetry.jsonl"
    synthetic_run(path, seconds=2)
    with path.open("a") as fh:
        fh.write('{"t": 1, "gpu": 0, "temperature_c": 99')
    assert telemetry_summary(tmp_path / "telemetry.jsonl")["peak_temperature_c"] == 90
