"""Issue 43: on Windows without long paths, a runs folder whose deepest run file would pass 259 characters is
refused at launch with the fix (every launch: rlpanel train, a group, a restart; the window's Launch in
tests/app/test_launch_path_length.py). Windows happens by setting core.run.path_length's seams: its platform, and
a registry answering with recorded values (the key present, ``LongPathsEnabled`` 0, 1 or absent)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from core.cli.main import main
from core.config.validate import validate_config
from core.launch.start import StartError, restart_run, start_group
from core.run import path_length
from core.run.layout import RunDir
from core.run.status import read_status
from core.run.store import RunStore
from core.util.long_paths import FILESYSTEM_KEY, FIX
from tests.training_helpers import make_run, wait_state


def recorded_registry(long_paths: int | None):
    """The registry as a Windows machine answers: the FileSystem key, with LongPathsEnabled as given (None: absent)."""
    values = {(FILESYSTEM_KEY, None): True, (FILESYSTEM_KEY, "LongPathsEnabled"): long_paths}
    return lambda key, name: values.get((key, name))


@pytest.fixture
def windows(monkeypatch):
    """Windows with long paths off (its default); ``windows(1)`` turns them on."""
    def make(long_paths: int | None = 0) -> None:
        monkeypatch.setattr(path_length, "platform", "win32")
        monkeypatch.setattr(path_length, "registry", recorded_registry(long_paths))

    make()
    return make


def folder_of(tmp_path: Path, chars: int) -> Path:
    """A runs folder whose absolute path is exactly ``chars`` characters long."""
    pad = chars - len(str(tmp_path)) - 1
    assert pad > 0, "the test's own folder is already that long"
    folder = tmp_path / ("d" * pad)
    assert len(str(folder)) == chars
    return folder


def ppo(name: str | None = None):
    return validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, **({"name": name} if name else {})}).config


# a PPO CartPole run's id: 20261122-043012-ppo-cartpole-v1 (31), -1000 when taken (5): a run's deepest path is the
# folder + 1 + 36 + 80 characters
PPO_ID_CHARS = 31 + 5


def test_the_deepest_file_of_a_run_folder_fits_the_constant(tmp_path):
    """Every name a run writes, at its longest, against DEEPEST_FILE_CHARS (a new, deeper file fails here)."""
    from stable_baselines3.common.logger import TensorBoardOutputFormat

    layout = RunDir(tmp_path / "run")
    biggest_step = 10**12 - 1  # the checkpoint names' 12 digits
    names = [layout.checkpoint_file(biggest_step, part) for part in ("model", "replay_buffer", "vecnormalize", "manifest")]
    names += [layout.superseded_checkpoints / name.name for name in names]
    names += [layout.checkpoint_temp(name) for name in names[:4]]
    names += [layout.checkpoints / f".{layout.checkpoint_file(biggest_step, 'manifest').name}.abcdefgh.tmp"]  # mkstemp
    names += [layout.sb3_logs / "progress-attempt999.json", layout.monitor / "999.monitor.csv", layout.cache_of(layout.telemetry)]
    longest = max(len(str(name)) - len(str(layout.path)) for name in names)
    assert longest == len("/checkpoints.superseded/step_999999999999_vecnormalize.pkl") == 58

    tb = TensorBoardOutputFormat(str(layout.tensorboard))  # SB3's own writer makes the event file's name
    tb.close()
    (event,) = os.listdir(layout.tensorboard)
    # at Windows' longest computer name (15) and a 10-digit pid
    chars = 1 + len("tb/") + len(event) - len(socket.gethostname()) + 15 - len(str(os.getpid())) + 10
    assert event.startswith("events.out.tfevents.") and chars == 63
    assert path_length.DEEPEST_FILE_CHARS - max(longest, chars) >= 15  # the margin the constant's comment gives


def test_a_folder_too_deep_is_refused_with_its_length_the_limit_and_the_fix(tmp_path, windows):
    folder = folder_of(tmp_path, 200)
    message = path_length.path_problem(folder, ppo())
    assert message == (f"the runs folder {folder} (200 characters) is too deep for Windows without long paths "
                       "(LongPathsEnabled is off): a run's deepest file there would be 317 characters, past Windows' "
                       f"limit of 259; {FIX} (at most 142 characters for this run)")


def test_the_deepest_folder_that_fits_and_one_character_more(tmp_path, windows):
    assert path_length.path_problem(folder_of(tmp_path, 142), ppo()) is None
    assert "would be 260 characters" in path_length.path_problem(folder_of(tmp_path, 143), ppo())


@pytest.mark.parametrize(("platform", "long_paths"), [("win32", 1), ("linux", 0), ("darwin", 0)])
def test_long_paths_on_or_another_system_refuses_nothing(tmp_path, monkeypatch, platform, long_paths):
    monkeypatch.setattr(path_length, "platform", platform)
    monkeypatch.setattr(path_length, "registry", recorded_registry(long_paths))
    assert path_length.path_problem(folder_of(tmp_path, 240), ppo()) is None


def test_an_absent_value_is_windows_default_off_and_an_unreadable_key_refuses_nothing(tmp_path, monkeypatch, windows):
    windows(None)  # LongPathsEnabled absent: off
    assert path_length.path_problem(folder_of(tmp_path, 240), ppo()) is not None
    monkeypatch.setattr(path_length, "registry", lambda key, name: None)  # the key unreadable: unknown, no refusal
    assert path_length.path_problem(folder_of(tmp_path, 240), ppo()) is None


def test_a_typed_run_name_that_makes_it_too_long_says_a_shorter_name_fixes_it(tmp_path, windows):
    """The check counts this launch's id, its name included: the folder fits short names, and the message says
    how long a name still fits."""
    folder = folder_of(tmp_path, 130)
    assert path_length.path_problem(folder, ppo()) is None
    message = path_length.path_problem(folder, ppo("my long experiment name"))  # -my-long-experiment-name: 24
    assert "would be 271 characters" in message
    assert message.endswith(f"{FIX} (at most 118 characters for this run); or give the run a shorter name: "
                            "'my long experiment name' adds 24 to its id (at most 11 characters would fit)")
    assert path_length.path_problem(folder, ppo("my long exp")) is None  # 11 characters: fits


def test_rlpanel_train_refuses_the_folder_and_creates_nothing(tmp_path, windows, capsys):
    folder = folder_of(tmp_path, 200)
    code = main(["train", "--algo", "PPO", "--env", "CartPole-v1", "--detach", "--runs-dir", str(folder)])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert err.strip() == (f"rlpanel train: the runs folder {folder} (200 characters) is too deep for Windows without "
                           "long paths (LongPathsEnabled is off): a run's deepest file there would be 317 characters, "
                           f"past Windows' limit of 259; {FIX} (at most 142 characters for this run)")
    assert not folder.exists() or list(folder.iterdir()) == []


@pytest.mark.training
def test_rlpanel_train_launches_in_a_short_folder_on_the_same_windows(runs_dir, windows, capsys):
    code = main(["train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "1", "--detach",
                 "--runs-dir", str(runs_dir)])
    assert code == 0, capsys.readouterr().err
    (run,) = runs_dir.iterdir()
    assert wait_state(run, ("finished", "failed", "crashed")) == "finished", (run / "worker.log").read_text()


def test_a_group_counts_its_longest_seed_suffix_and_creates_no_run(tmp_path, windows):
    config = ppo()
    fits_alone = folder_of(tmp_path, 142)  # a single run's deepest path is exactly 259 here
    with pytest.raises(StartError, match="would be 264 characters") as refused:  # -s100: 5 more
        start_group(RunStore(fits_alone), config, [7, 100], reap=False)
    assert FIX in str(refused.value)
    assert not fits_alone.exists() or list(fits_alone.iterdir()) == []


def test_a_restart_counts_the_runs_own_id(tmp_path, windows):
    folder = folder_of(tmp_path, 180)
    run = make_run(folder, {"algo": "PPO"})  # made past the check (an older rlpanel, long paths turned off since)
    (run / "status.json").write_text(json.dumps({**read_status(run).to_json(), "state": "failed", "attempt": 1}))
    with pytest.raises(StartError, match=f"would be {180 + 1 + len(run.name) + 80} characters"):
        restart_run(run)
    assert read_status(run).state == "failed"
