"""Issue 44, the agent tools at their edges: a damaged config.yaml or checkpoint under evaluate, export-policy, record
and watch is one clear line (never a traceback), and every file these tools and ``rlpanel export`` write is written
under a temporary name in its folder, checked, then renamed: a full or read-only disk exits non-zero, says why, and
leaves no file that looks finished."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from core.cli.main import main
from core.launch.agent_child import PolicyToolError, run_policy_tool
from core.run.layout import RunDir
from tests.faults.conftest import TALLY
from tests.faults.test_disk_full import fill
from tests.training_helpers import copy_run

pytestmark = pytest.mark.training

NESTED = "algo: PPO\nenv: " + "[" * 40 + "]" * 40 + "\n"
DAMAGED_CONFIGS = {  # what a config.yaml may be after a crash, a sync client or a hand edit; the word the line names
    "bad YAML": ("algo: PPO\nenv: {id: CartPole-v1\n", "cannot read YAML"),
    "missing": (None, "No such file"),
    "a list": ("- algo\n- PPO\n", "expected a mapping"),
    "over 1 MiB": ("algo: PPO\n" + "# padding\n" * 110_000, "1.0 MiB limit"),
    "nested over 32 levels": (NESTED, "nests deeper than 32 levels"),
    "a !!python tag": ("algo: !!python/object/apply:os.system ['echo hi']\n", "cannot read YAML"),
}
TOOLS = {  # each agent command with what it needs beyond RUN
    "evaluate": ["--episodes", "1"],
    "export-policy": ["--format", "onnx"],
    "record": ["-o", "agent.mp4"],
    "watch": [],
}


def damage_config(run, text: str | None) -> None:
    config = RunDir(run).config
    if text is None:
        config.unlink()
    else:
        config.write_text(text)


def one_clear_line(code: int, err: str, *words: str) -> bool:
    """The tally's judgement: a non-zero exit with one line on stderr naming each of ``words``, no traceback."""
    lines = [line for line in err.splitlines() if line.strip()]
    if "Traceback" in err:
        TALLY["agent tool tracebacks"] += 1
        return False
    clear = code != 0 and len(lines) == 1 and all(w in lines[0] for w in words)
    TALLY["agent tool clear errors"] += clear
    return clear


@pytest.mark.parametrize("damage", list(DAMAGED_CONFIGS))
def test_a_damaged_config_is_one_clear_line_in_every_agent_command(damage, trained_run, tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    text, word = DAMAGED_CONFIGS[damage]
    damage_config(run, text)
    monkeypatch.chdir(tmp_path)
    for tool, extra in TOOLS.items():
        TALLY["agent tool inputs tried"] += 1
        code = main([tool, run.name, *extra, "--runs-dir", str(runs)])
        err = capsys.readouterr().err
        assert one_clear_line(code, err, f"rlpanel {tool}: run {run.name}", "config.yaml", word), (tool, code, err)
        assert "restore" in err  # the fix: the run's own settings, or rlpanel delete
    assert not (tmp_path / "agent.mp4").exists()


def test_the_window_s_child_tools_say_a_damaged_config_in_one_line(trained_run, tmp_path):
    """What the Runs tab's Evaluate..., Export policy..., Record... and Watch share: the child's error, never a
    ValueError out of the launch (it was raised before the child started: a traceback in the window)."""
    run = copy_run(trained_run, tmp_path / "runs")
    damage_config(run, DAMAGED_CONFIGS["nested over 32 levels"][0])
    TALLY["agent tool inputs tried"] += 1
    with pytest.raises(PolicyToolError) as caught:
        run_policy_tool("evaluate", run, "--episodes", "1")
    assert one_clear_line(1, str(caught.value), f"run {run.name}", "config.yaml", "nests deeper than 32 levels")


def _best_from(run, step: int) -> None:
    """A best checkpoint (``best.json`` and its files) made of the step checkpoint ``step``, as the worker keeps it."""
    layout = RunDir(run)
    manifest = json.loads(layout.checkpoint_file(step, "manifest").read_text())
    best = {"step": step, "mean_reward": 200.0, "sizes": {}}
    for part in ("model", "vecnormalize"):
        if manifest.get(part):
            target = layout.best_checkpoint_file(part)
            shutil.copyfile(layout.checkpoints / manifest[part], target)
            best[part] = target.name
            best["sizes"][target.name] = target.stat().st_size
    layout.best_checkpoint_file("manifest").write_text(json.dumps(best))


def test_a_truncated_best_checkpoint_is_said_to_be_damaged_not_missing(trained_run, tmp_path, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    _best_from(run, 768)
    best = RunDir(run).best_checkpoint_file("model")
    best.write_bytes(best.read_bytes()[:2000])
    for tool, extra in TOOLS.items():
        TALLY["agent tool inputs tried"] += 1
        code = main([tool, run.name, "--checkpoint", "best", *extra, "--runs-dir", str(runs)])
        err = capsys.readouterr().err
        assert one_clear_line(code, err, "best checkpoint (step 768)", "best.zip", "cut short"), (tool, err)
        assert "periodic evaluation" not in err and "--checkpoint last" in err


def test_a_run_whose_every_checkpoint_is_damaged_says_what_is_wrong_with_them(trained_run, tmp_path, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    for step in (512, 768, 1024):
        model = RunDir(run).checkpoint_file(step, "model")
        model.write_bytes(model.read_bytes()[:3000])
    for tool, extra in TOOLS.items():
        TALLY["agent tool inputs tried"] += 1
        code = main([tool, run.name, *extra, "--runs-dir", str(runs)])
        err = capsys.readouterr().err
        assert one_clear_line(code, err, f"run {run.name} has no complete checkpoint: the checkpoint at step 1,024",
                              "cut short"), (tool, err)


def test_last_says_when_the_newest_checkpoint_is_damaged_and_an_older_one_plays(trained_run, tmp_path, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    newest = RunDir(run).checkpoint_file(1024, "model")
    newest.write_bytes(newest.read_bytes()[:3000])
    TALLY["agent tool inputs tried"] += 1
    code = main(["evaluate", run.name, "--episodes", "1", "--json", "--runs-dir", str(runs)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["checkpoint_step"] == 768
    notes = [line for line in captured.err.splitlines() if line.strip()]
    assert len(notes) == 1 and "step 1,024" in notes[0] and "using the checkpoint at step 768" in notes[0], notes
    TALLY["agent tool clear errors"] += 1


# --- writers on a full or read-only disk ---------------------------------------------------------------------------

def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("filler"))


@pytest.fixture
def read_only(small_disk):
    """``small_disk`` made read-only (root writes through permissions, not through a read-only mount)."""
    (small_disk / "out").mkdir()
    done = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot remount the tmpfs read-only here ({done.stderr.strip()[:200]})")
    return small_disk / "out"


def fill_leaving(disk, free_bytes: int) -> None:
    """Fill ``disk`` but for about ``free_bytes``: a writer writes its first kilobytes and fails later, at its end."""
    fill(disk)
    for path in disk.glob("filler-*"):
        path.unlink()
    with open(disk / "filler-0", "wb") as fh:
        fh.write(b"\0" * (shutil.disk_usage(disk).free - free_bytes))


@pytest.mark.parametrize("suffix, room", [(".mp4", "none"), (".mp4", "half"), (".gif", "none"), (".gif", "half")])
def test_record_to_a_full_disk_exits_non_zero_and_leaves_no_video(suffix, room, trained_run, tmp_path, small_disk,
                                                                   capsys):
    """"none": ffmpeg cannot start the file; "half": room for half the video (the session's trained policy decides
    its length: measured first), so the writer fails at its end, where imageio did not look (exit 0, "recorded")."""
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    out = small_disk / "out"
    out.mkdir()
    if room == "half":
        assert main(["record", run.name, "-o", str(tmp_path / f"whole{suffix}"), "--runs-dir", str(runs)]) == 0
        fill_leaving(small_disk, (tmp_path / f"whole{suffix}").stat().st_size // 2)
    else:
        fill(small_disk)
    capsys.readouterr()
    video = out / f"agent{suffix}"
    TALLY["agent tool inputs tried"] += 1
    code = main(["record", run.name, "-o", str(video), "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert one_clear_line(code, err, "rlpanel record:", "no space left on device", str(video)), err
    assert _leftovers(out) == []
    TALLY["agent tool writes refused"] += 1


def test_record_to_a_read_only_folder_says_so(trained_run, tmp_path, read_only, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    video = read_only / "agent.mp4"
    TALLY["agent tool inputs tried"] += 1
    code = main(["record", run.name, "-o", str(video), "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert one_clear_line(code, err, "rlpanel record:", "Read-only file system", str(video)), err
    assert "FFMPEG" not in err and _leftovers(read_only) == []
    TALLY["agent tool writes refused"] += 1


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_export_policy_to_a_full_disk_leaves_neither_the_file_nor_its_sidecar(fmt, trained_run, tmp_path, small_disk,
                                                                               capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    out = small_disk / "out"
    out.mkdir()
    fill(small_disk)
    TALLY["agent tool inputs tried"] += 1
    target = out / "policy.bin"
    code = main(["export-policy", run.name, "--format", fmt, "-o", str(target), "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert one_clear_line(code, err, "rlpanel export-policy:", "no space left on device", str(out)), err
    assert "traced" not in err and _leftovers(out) == []
    TALLY["agent tool writes refused"] += 1


def test_export_policy_to_a_read_only_folder_says_so(trained_run, tmp_path, read_only, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    TALLY["agent tool inputs tried"] += 1
    code = main(["export-policy", run.name, "--format", "onnx", "-o", str(read_only / "p.onnx"), "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert one_clear_line(code, err, "rlpanel export-policy:", "Read-only file system", str(read_only)), err
    assert "traced" not in err and _leftovers(read_only) == []
    TALLY["agent tool writes refused"] += 1


def test_export_policy_keeps_an_existing_sidecar_without_overwrite(trained_run, tmp_path, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    output = tmp_path / "p.onnx"
    sidecar = tmp_path / "p.onnx.json"
    sidecar.write_text('{"mine": true}')
    TALLY["agent tool inputs tried"] += 1
    code = main(["export-policy", run.name, "--format", "onnx", "-o", str(output), "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert one_clear_line(code, err, str(sidecar), "exists", "--overwrite"), err
    assert sidecar.read_text() == '{"mine": true}' and not output.exists()
    # the tool itself (what the window runs) refuses as well
    with pytest.raises(PolicyToolError, match="p.onnx.json exists"):
        run_policy_tool("export", run, "--format", "onnx", "-o", str(output))
    assert sidecar.read_text() == '{"mine": true}' and not output.exists()
    TALLY["agent tool writes refused"] += 1


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "json"])
def test_export_of_runs_to_a_full_disk_exits_non_zero_and_leaves_no_table(fmt, trained_run, tmp_path, small_disk, capsys):
    runs = tmp_path / "runs"
    copy_run(trained_run, runs)
    out = small_disk / "out"
    out.mkdir()
    fill(small_disk)
    table = out / f"night.{fmt}"
    TALLY["agent tool inputs tried"] += 1
    code = main(["export", "--all", "-o", str(table), "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert one_clear_line(code, err, "rlpanel export:", "no space left on device", str(table)), err
    assert _leftovers(out) == []
    TALLY["agent tool writes refused"] += 1


def test_export_all_takes_a_run_whose_evaluations_file_is_a_folder(trained_run, tmp_path, capsys):
    runs = tmp_path / "runs"
    run = copy_run(trained_run, runs)
    RunDir(run).evaluations_file.mkdir()
    TALLY["agent tool inputs tried"] += 1
    code = main(["export", "--all", "--format", "json", "--runs-dir", str(runs)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert [row["run_id"] for row in json.loads(captured.out)] == [run.name]
    assert "Traceback" not in captured.err
    TALLY["agent tool clear errors"] += 1
