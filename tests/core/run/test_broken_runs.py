"""Issue 11, points 4 and 13: one malformed file in a run folder never hides or breaks the other runs.

The folder is listed as broken with the reason (``rlpanel runs``), ``runs ID``, ``export`` and
``resume`` answer in one line, and nothing prints a traceback.
"""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.run.states import BROKEN
from core.run.status import read_status
from core.run.store import RunStore
from tests.results_helpers import make_result_run

# (file, content, whether the run must read as broken)
CORRUPTIONS = {
    "status-list": ("status.json", "[1, 2, 3]", True),
    "status-wrong-types": ("status.json", json.dumps({"state": 5, "pid": "x", "created_at": "yesterday", "error": "boom"}), True),
    "status-wrong-field-types": ("status.json", json.dumps({"state": "finished", "pid": "x", "created_at": [1],
                                                            "error": "boom", "attempt": "two"}), False),
    "status-not-json": ("status.json", "{not json", True),
    "summary-wrong-types": ("summary.json", json.dumps({"timesteps": "many", "final_mean_reward": "good", "episodes": [1],
                                                        "wall_time_s": {}, "peak_gpu_memory_bytes": "1 GB"}), False),
    "summary-list": ("summary.json", "[]", False),
    "config-list": ("config.yaml", "- 1\n- 2\n", True),
    "config-junk": ("config.yaml", "algo: [unclosed\n", True),
    "config-alias-bomb": ("config.yaml", "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True)), True),
    "metrics-wrong-types": ("metrics.jsonl", "\n".join(json.dumps(r) for r in (
        {"kind": "episode", "step": "x", "reward": "y", "length": None, "t": 1},
        {"kind": "progress", "step": [1], "t": "now"}, {"kind": 5}, [1, 2], {"kind": "train", "step": 3, "t": 1, "a": "b"},
    )) + "\n", False),
    "telemetry-wrong-types": ("telemetry.jsonl", json.dumps({"t": "x", "gpu": 0, "memory_used_bytes": "lots",
                                                             "utilization_pct": "hi", "n": "x", "kind": "agg"}) + "\n", False),
}


@pytest.fixture
def two_runs(runs_dir):
    good = make_result_run(runs_dir, "good", [1.0, 2.0, 3.0], algo="A2C")
    bad = make_result_run(runs_dir, "bad", [4.0, 5.0], algo="PPO")
    return good, bad


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_a_damaged_file_never_hides_the_other_runs(two_runs, runs_dir, capsys, case):
    good, bad = two_runs
    name, content, broken = CORRUPTIONS[case]
    (bad / name).write_text(content)

    code, out, _ = run_cli(capsys, "runs", "--runs-dir", str(runs_dir), "--json")
    listed = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and set(listed) == {good.name, bad.name}
    assert listed[good.name]["state"] == "finished"
    assert (listed[bad.name]["state"] == BROKEN) == broken
    if broken:
        assert listed[bad.name]["broken"], "the reason is given"
    code, out, _ = run_cli(capsys, "runs", "--runs-dir", str(runs_dir))
    assert code == 0 and good.name in out and bad.name in out
    if broken:
        assert "cannot be read" in out

    code, out, err = run_cli(capsys, "runs", bad.name, "--runs-dir", str(runs_dir))
    assert code == 0 and bad.name in out

    code, out, err = run_cli(capsys, "export", "--all", "--format", "csv", "--runs-dir", str(runs_dir))
    assert code == 0, err
    assert good.name in out
    assert (bad.name in out) != broken
    if broken:
        assert f"skipped {bad.name}" in err

    code, out, err = run_cli(capsys, "resume", bad.name, "--runs-dir", str(runs_dir))
    assert code != 0 and len(err.strip().splitlines()) <= 6, err  # no checkpoint, broken or finished: one clear answer
    assert read_status(good).state == "finished"


def test_status_fields_of_the_wrong_type_are_dropped_and_named(two_runs):
    _, bad = two_runs
    (bad / "status.json").write_text(json.dumps({"state": "stopped", "pid": "x", "ended_at": "later"}))
    status = read_status(bad)
    assert status.state == "stopped" and status.pid is None and status.ended_at is None
    assert status.problems == ("pid is a str", "ended_at is a str")


def test_a_folder_with_a_status_but_no_config_is_listed_as_broken(runs_dir, two_runs):
    good, bad = two_runs
    (bad / "config.yaml").unlink()
    infos = {i.id: i for i in RunStore(runs_dir).list()}
    assert infos[bad.name].state == BROKEN and "config.yaml" in infos[bad.name].broken
    assert infos[good.name].state == "finished"


@pytest.mark.parametrize("run_id", ["x" * 5000, "../etc", "a/b", ".hidden", "bad name"])
@pytest.mark.parametrize("command", ["runs", "stop", "resume", "export"])
def test_a_run_id_that_cannot_be_one_is_one_clear_line(runs_dir, capsys, command, run_id):  # point 13
    argv = {"export": ["export", "--runs", run_id]}.get(command, [command, run_id])
    code, _, err = run_cli(capsys, *argv, "--runs-dir", str(runs_dir))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert len(err) < 400
