"""Issue 25: status.json is one typed record between processes.

``read_status`` gives a ``RunStatus`` (attributes, not dict keys); a file written before the
version was (no ``status_version``, keys missing) reads as it did; keys a newer version wrote are
kept, in the reading and in the file; a write of an unknown key or a wrong type is refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.cli.main import main
from core.run.states import BROKEN
from core.run.status import STATUS_VERSION, RunStatus, read_status, write_status
from core.run.store import RunStore, run_info
from tests.results_helpers import make_result_run

OLD_STATUS = Path(__file__).parent / "data" / "status_v1.json"  # as rlpanel wrote it before status_version


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    """A real run folder (config, records) whose status.json is the old-format file."""
    run = make_result_run(tmp_path / "runs", "old", [10.0, 20.0], state="stopped")
    shutil.copyfile(OLD_STATUS, run / "status.json")
    return run


def test_an_old_status_file_reads_as_a_typed_record(old_run: Path) -> None:
    status = read_status(old_run)
    assert isinstance(status, RunStatus) and status.status_version is None
    assert status.state == "stopped" and status.attempt == 2 and status.resumed_from == "crashed"
    assert status.exit_reason == "stopped at step 20,480 (checkpoint saved)" and status.error is None
    assert status.warnings == ["n_envs 16 is more than the 8 CPU cores"] and status.queue == {"id": "20240310-2215", "job": "ppo"}
    assert status.train_time_s == 512.75 and status.pid == 48211
    # keys the old version never wrote are None, not missing: no reader guesses
    assert status.planned_timesteps is None and status.estimate_gpu is None and status.paused_s is None
    assert status.ray is None and status.device is None and status.notes == [] and status.extra == {}
    info = run_info(old_run)
    assert info.state == "stopped" and info.preset == "ppo-cartpole" and info.status == status


def test_a_write_keeps_the_old_keys_as_they_were_and_adds_the_version(old_run: Path) -> None:
    before = json.loads(OLD_STATUS.read_text())
    write_status(old_run, exit_reason="stopped again")
    after = json.loads((old_run / "status.json").read_text())
    assert after["status_version"] == STATUS_VERSION and after["exit_reason"] == "stopped again"
    untouched = set(before) - {"exit_reason", "updated_at"}
    assert {k: after[k] for k in untouched} == {k: before[k] for k in untouched}
    assert after["updated_at"] > before["updated_at"]


def test_keys_a_newer_version_wrote_are_kept(tmp_path: Path) -> None:
    run = make_result_run(tmp_path / "runs", "newer", [1.0])
    raw = json.loads((run / "status.json").read_text())
    raw.update(status_version=STATUS_VERSION + 1, gpu_share={"slots": 2}, state="stopped")
    (run / "status.json").write_text(json.dumps(raw))
    status = read_status(run)
    assert status.state == "stopped" and status.broken is None and status.problems == ()
    assert status.extra == {"gpu_share": {"slots": 2}} and status.status_version == STATUS_VERSION + 1
    write_status(run, exit_reason="stopped by hand")  # this version writes: the newer one's key and version stay
    on_disk = json.loads((run / "status.json").read_text())
    assert on_disk["gpu_share"] == {"slots": 2} and on_disk["status_version"] == STATUS_VERSION + 1
    assert read_status(run).to_json()["gpu_share"] == {"slots": 2}  # rlpanel runs ID --json shows it too


def test_rlpanel_runs_id_prints_an_old_status(old_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", old_run.name, "--runs-dir", str(old_run.parent), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"]["state"] == "stopped" and data["status"]["resumed_from"] == "crashed"
    assert main(["runs", old_run.name, "--runs-dir", str(old_run.parent)]) == 0
    assert "exit: stopped at step 20,480 (checkpoint saved)" in capsys.readouterr().out


def test_a_write_of_a_wrong_type_or_an_unknown_key_is_refused(tmp_path: Path) -> None:
    run = RunStore(tmp_path / "runs").create(make_config())
    before = (run / "status.json").read_bytes()
    with pytest.raises(TypeError, match="attempt is a str"):
        write_status(run, attempt="two")  # type: ignore[typeddict-item]
    with pytest.raises(TypeError, match="attempt is a bool"):
        write_status(run, attempt=True)
    with pytest.raises(TypeError, match="no field 'atempt'"):
        write_status(run, atempt=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field 'updated_at'"):
        write_status(run, updated_at=1.0)  # type: ignore[call-arg]
    assert (run / "status.json").read_bytes() == before  # nothing was written
    write_status(run, attempt=2, error=None, ended_at=None)  # None clears a field
    assert read_status(run).attempt == 2


def test_a_new_run_status_carries_the_version(tmp_path: Path) -> None:
    run = RunStore(tmp_path / "runs").create(make_config(), extra_status={"queue": {"id": "q1", "job": "a"}})
    raw = json.loads((run / "status.json").read_text())
    assert raw["status_version"] == STATUS_VERSION and raw["state"] == "queued" and raw["queue"] == {"id": "q1", "job": "a"}
    assert read_status(run).queue == {"id": "q1", "job": "a"}


def test_a_status_that_is_no_mapping_reads_broken(tmp_path: Path) -> None:
    run = RunStore(tmp_path / "runs").create(make_config())
    (run / "status.json").write_text('"finished"')
    status = read_status(run)
    assert status.state == BROKEN and status.broken == "status.json holds a str, not a status mapping"


def make_config():
    from core.config.validate import validate_config

    return validate_config({"name": "s", "env": {"id": "CartPole-v1"}, "algo": "A2C",
                            "budget": {"total_timesteps": 1000}}).config
