"""The run's GPU memory on Windows (WDDM): Windows' counter "GPU Process Memory ... Dedicated Usage" read from
recorded typeperf captures (wddm_samples/README.md says which are real), summed per pid exactly; the sampler
takes it where NVML lists the process without a figure, as NVML does under WDDM (the fake driver's "na")."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from core.telemetry.wddm import REOPEN_S, WddmMemory, bytes_per_pid, parse_instance, run_bytes

SAMPLES = Path(__file__).parent / "wddm_samples"
NVIDIA, IGPU = "0x00000000_0x0000f722", "0x00000000_0x0001506d"


def typeperf_pairs(name: str, row: int = 0, counter: str = "Dedicated Usage") -> list[tuple[str, float]]:
    """(instance, value) of one row of a typeperf CSV capture, for one counter: what PDH lists for a wildcard."""
    lines = [line for line in (SAMPLES / name).read_text(encoding="cp1252").splitlines() if line.startswith('"')]
    header, *rows = list(csv.reader(lines))
    out = []
    for path, value in zip(header[1:], rows[row][1:], strict=True):
        instance = path[path.index("(") + 1:path.rindex(")")]
        if path.endswith("\\" + counter) and "GPU Process Memory(" in path:
            out.append((instance, float(value)))
    return out


def test_an_instance_name_says_the_process_the_adapter_and_the_physical_gpu():
    assert parse_instance("pid_40160_luid_0x00000000_0x0000F722_phys_0") == (40160, NVIDIA, 0)
    assert parse_instance("PID_7_LUID_0x00000001_0x0000ABCD_PHYS_1") == (7, "0x00000001_0x0000abcd", 1)
    for other in ("luid_0x00000000_0x0000F722_phys_0", "pid_12_luid_0x0_0x1_phys_0_eng_0_engtype_3D", "_Total", ""):
        assert parse_instance(other) is None


def test_a_real_capture_of_one_process_reads_exactly_and_a_gone_process_reads_as_absent():
    pairs = typeperf_pairs("one_process_then_gone.csv")
    assert pairs == [("pid_40160_luid_0x00000000_0x0000F722_phys_0", 11403264.0)]  # Shared Usage left out
    assert bytes_per_pid(pairs) == {40160: 11_403_264}
    assert run_bytes(pairs, {40160}) == 11_403_264
    gone = typeperf_pairs("one_process_then_gone.csv", row=2)  # typeperf's "-1" once the process ended
    assert bytes_per_pid(gone) == {} and run_bytes(gone, {40160}) is None


def test_a_process_on_two_adapters_is_their_sum_or_one_adapter_when_its_luid_is_known():
    pairs = typeperf_pairs("one_process_two_adapters.csv")
    assert len(pairs) == 2  # the Shared Usage, Total Committed and adapter columns are other counters
    assert bytes_per_pid(pairs) == {1556: 9_433_419_776}  # 9,433,419,776 + 0
    assert bytes_per_pid(pairs, luid="0x00000000_0x00014FF6") == {1556: 0}
    assert run_bytes(pairs, {1556}, luid=NVIDIA.upper()) == 9_433_419_776


def test_the_runs_figure_is_the_sum_over_its_pids_and_adapters_and_nothing_of_other_processes():
    pairs = typeperf_pairs("laptop_run_composed.csv")
    assert len(pairs) == 7
    per_pid = bytes_per_pid(pairs)
    assert per_pid == {1556: 289_406_976, 9080: 44_040_192, 5120: 23_068_672, 7412: 2_402_287_616, 11852: 0}
    worker, envs = 7412, {7520, 7528}  # the env processes never touched the GPU: no instance
    assert run_bytes(pairs, {worker, *envs}) == 2_398_093_312 + 4_194_304
    assert run_bytes(pairs, {worker, *envs}, luid=NVIDIA) == 2_398_093_312
    assert run_bytes(pairs, {worker}, luid=IGPU) == 4_194_304
    assert run_bytes(pairs, envs) is None  # none of them listed: unknown, not 0
    assert run_bytes(pairs, {11852}) == 0  # listed with nothing on the card


class RecordedCounter:
    """A counter reader that answers recorded captures in turn (then the last again), as PdhReader answers PDH."""

    def __init__(self, *answers: list[tuple[str, float]] | None):
        self.answers = list(answers)
        self.reads = self.closes = 0

    def __call__(self):
        self.reads += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def close(self):
        self.closes += 1


def test_a_query_that_never_lists_the_run_is_opened_afresh_at_most_every_30_s():
    now = [0.0]
    reader = RecordedCounter(typeperf_pairs("laptop_run_composed.csv"))
    wddm = WddmMemory(reader, clock=lambda: now[0])
    assert wddm.run_bytes({99}) is None and reader.closes == 0
    now[0] = REOPEN_S - 1
    assert wddm.run_bytes({99}) is None and reader.closes == 0
    now[0] = REOPEN_S
    assert wddm.run_bytes({99}) is None and reader.closes == 1  # PDH may have kept the instances of its start
    now[0] = REOPEN_S + 1
    assert wddm.run_bytes({7412}) == 2_402_287_616 and reader.closes == 1
    assert WddmMemory(RecordedCounter(None)).run_bytes({7412}) is None  # the reader failed: no figure


SAMPLER = """
import json, sys
from pathlib import Path
import os
Path(os.environ["FAKE_NVML_CONFIG"]).write_text(sys.argv[1].replace(";", "\\n") + "\\n")
sys.path.insert(0, os.path.dirname(sys.argv[3]))
from test_wddm import RecordedCounter, typeperf_pairs
from core.telemetry.nvml import GpuSampler
from core.telemetry.wddm import WddmMemory
counter = RecordedCounter(typeperf_pairs("laptop_run_composed.csv")) if sys.argv[2] == "wddm" else None
torch = lambda: 1_900_000_000
sampler = GpuSampler(torch_memory=torch, wddm=WddmMemory(counter) if counter else None)
s = sampler.sample({7412, 7520})
sampler.close()
print(json.dumps([[x.process_memory_bytes, x.process_memory_source] for x in s] + [counter.closes if counter else None]))
"""


@pytest.mark.parametrize(("procs", "wddm", "expected"), [
    # WDDM: NVML lists the worker without a figure; Windows' counter has it, on the GPU torch runs on only
    ("7412:na", "wddm", [[2_402_287_616, "wddm_counter"], [0, "nvml_process"], 1]),
    ("7412:na", "none", [[1_900_000_000, "torch_reserved"], [0, "nvml_process"], None]),  # no counter: torch's figure
    ("7412:3000000000", "wddm", [[3_000_000_000, "nvml_process"], [0, "nvml_process"], 1]),  # NVML's figure comes first
])
def test_the_sampler_takes_windows_counter_where_nvml_has_no_figure(fake_nvml, procs, wddm, expected):
    out = fake_nvml.run_python(SAMPLER, f"count=2;gpu0.procs={procs}", wddm, __file__)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == expected


RECORDER = """
import json, os, sys, time
from pathlib import Path
Path(os.environ["FAKE_NVML_CONFIG"]).write_text(f"procs={os.getpid()}:na\\n")  # WDDM: listed, no figure
sys.path.insert(0, os.path.dirname(sys.argv[2]))
from test_wddm import RecordedCounter
from core.telemetry.recorder import TelemetryRecorder
from core.telemetry.summary import telemetry_summary
from core.telemetry.wddm import WddmMemory
me = f"pid_{os.getpid()}_luid_0x00000000_0x0000F722_phys_0"
counter = RecordedCounter(None, [(me, 2_398_093_312.0)], [(me, 2_500_000_000.0)], [(me, 2_450_000_000.0)])
path = Path(sys.argv[1])
with TelemetryRecorder(path, hz=20, torch_memory=lambda: 1_700_000_000, wddm=WddmMemory(counter)) as rec:
    while counter.reads < 6:
        time.sleep(0.05)
lines = [json.loads(x) for x in path.read_text().splitlines()]
print(json.dumps({"sources": [x.get("process_memory_source") for x in lines if "kind" not in x][:4],
                  "summary": telemetry_summary(path), "closes": counter.closes}))
"""


def test_a_recorded_run_under_wddm_names_windows_counter_in_its_summary(fake_nvml, tmp_path):
    """The recorder's own thread on the fake driver: torch's figure until the counter answers, then the counter's."""
    out = fake_nvml.run_python(RECORDER, str(tmp_path / "telemetry.jsonl"), __file__)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["sources"] == ["torch_reserved", "wddm_counter", "wddm_counter", "wddm_counter"]
    assert data["summary"]["peak_process_gpu_memory_bytes"] == 2_500_000_000
    assert data["summary"]["gpu_memory_measure"] == "wddm_counter"
    assert data["closes"] == 1  # the query is ended with the recording


def test_a_pdh_that_cannot_be_used_reads_as_no_figure_and_is_not_asked_again_each_tick():
    """Windows' reader where pdh.dll cannot be loaded (here: no WinDLL at all): None and the reason, no exception."""
    from core.telemetry.wddm import PdhReader, platform_wddm

    assert platform_wddm("linux") is None
    wddm = platform_wddm("win32")
    assert wddm is not None and isinstance(wddm.read, PdhReader)
    assert wddm.run_bytes({7412}) is None
    assert wddm.read.reason is not None and "WinDLL" in wddm.read.reason
    wddm.read.reason = None
    assert wddm.run_bytes({7412}) is None and wddm.read.reason is None  # within RETRY_S: not tried again
    wddm.close()
