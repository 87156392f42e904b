"""Which memory figure: ``rlpanel runs RUN`` and the results table name each peak, the run's own first, for run
folders recorded before own memory (the RSS sum only) and after (PSS)."""

from __future__ import annotations

import json

from core.results.table import columns_for, results
from core.run.summary import summarize
from core.util.files import read_json, write_json_atomic
from tests.results_helpers import make_result_run
from tests.training_helpers import cli

MIB = 2**20
NEW_KEYS = ("peak_host_memory_bytes", "host_memory_measure", "gpu_memory_measure")


def old_run(runs_dir):
    """A run folder as rlpanel wrote it before: the RSS sum its only host figure, in its telemetry and summary."""
    run = make_result_run(runs_dir, "old", [1.0, 2.0], gpu_peak_bytes=1462 * MIB, process_peak_bytes=982 * MIB)
    summary = {k: v for k, v in read_json(run / "summary.json").items() if k not in NEW_KEYS}
    write_json_atomic(run / "summary.json", summary)
    return run


def new_run(runs_dir):
    """A run folder with own memory read on some of its telemetry lines."""
    run = make_result_run(runs_dir, "new", [1.0, 2.0], gpu_peak_bytes=1462 * MIB, process_peak_bytes=982 * MIB)
    lines = [json.loads(line) for line in (run / "telemetry.jsonl").read_text().splitlines()]
    for i, line in enumerate(lines):
        line["process_memory_source"] = "nvml_process"
        if i != 1:
            line.update(host_memory_bytes=(120 + i) * MIB, host_memory_measure="pss")
    (run / "telemetry.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    write_json_atomic(run / "summary.json", {**read_json(run / "summary.json"), **{
        k: v for k, v in summarize(run).items() if k in (*NEW_KEYS, "peak_process_gpu_memory_bytes")}})
    return run


def test_runs_details_name_each_memory_figure_in_old_and_new_folders(runs_dir):
    old, new = old_run(runs_dir), new_run(runs_dir)
    out = cli("runs", old.name, "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    assert "peak GPU memory, this run: 982 MiB (its own processes, the figure's measure unknown)" in out.stdout
    assert ("peak GPU memory, whole card: 1,462 MiB (the card's total used, other programs and the driver's reserve "
            "included)") in out.stdout
    assert "peak host memory, this run: 300 MiB (RSS sum: shared pages counted once per process)" in out.stdout
    lines = out.stdout.splitlines()
    assert lines.index(next(x for x in lines if x.startswith("peak GPU memory, this run"))) < lines.index(
        next(x for x in lines if x.startswith("peak GPU memory, whole card")))
    out = cli("runs", new.name, "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    assert "peak GPU memory, this run: 982 MiB (its own processes, NVML's per-process figure)" in out.stdout
    assert "peak host memory, this run: 122 MiB (PSS)" in out.stdout
    assert "summary.host_memory_measure: pss" in out.stdout
    data = json.loads(cli("runs", new.name, "--runs-dir", str(runs_dir), "--json").stdout)
    assert (data["summary"]["peak_host_memory_bytes"], data["summary"]["host_memory_measure"]) == (122 * MIB, "pss")


def test_the_results_table_of_old_and_new_folders_names_each_rows_measure(runs_dir):
    old, new = old_run(runs_dir), new_run(runs_dir)
    rows = results([old, new])
    assert [(r.peak_host_memory_mib, r.host_memory_measure) for r in rows] == [(300.0, "RSS sum"), (122.0, "PSS")]
    titles = {c.key: c.title for c in columns_for(rows)}
    assert titles["peak_host_memory_mib"] == "Peak host memory, this run (MiB)"
    assert titles["host_memory_measure"] == "Host memory measure"
    (only_new,) = results([new])
    assert {c.key: c.title for c in columns_for([only_new])}["peak_host_memory_mib"] == "Peak host memory, this run, PSS (MiB)"
    assert "host_memory_measure" not in {c.key for c in columns_for([only_new])}
