"""A Windows night, as far as this machine can make one happen (issue 41): every command's output redirected to a
file under the ANSI code page (``PYTHONIOENCODING=cp1252``: what Windows gives a redirected stream), a user folder and
a runs folder whose paths hold spaces and umlauts, env processes started with ``spawn`` (Windows has no fork), a
group of seeds and a baseline in the folder, a name with letters outside cp1252. No command may end in a traceback;
what they print is UTF-8; train, resume, report and every export format work there.

Marked ``plain``: ``.ci/plain-check`` runs it again in the wheel installed with no extras, as our users install it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.training, pytest.mark.plain]

# envs in processes of their own, started as Windows starts them; rollouts small enough for a few thousand steps
SPAWNED = ["--set", "runtime.vec_env=subproc", "--set", "runtime.start_method=spawn", "--set", "runtime.n_envs=2",
           "--set", "ppo.n_steps=128", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=1",
           "--set", "budget.checkpoint_every=256"]
NAME = "Prüfung → Δ ≤ ✓"  # a display name outside cp1252: what the user typed comes back in every listing


class Night:
    """The user's folders and ``rlpanel`` run as a Windows console script with its output redirected."""

    def __init__(self, root: Path):
        self.user = root / "Jürgen Müller"
        self.runs = self.user / "runs dir"
        self.out = self.user / "Ergebnisse für heute"
        self.out.mkdir(parents=True)
        self.env = {**os.environ, "PYTHONIOENCODING": "cp1252", "RLPANEL_HOME": str(self.user / "rlpanel home")}
        self.count = 0

    def run(self, *args: str, code: int = 0, timeout: float = 300) -> str:
        """``rlpanel ARGS --runs-dir RUNS > out 2> err`` from the user's folder; its stdout, read as UTF-8."""
        self.count += 1
        out, err = self.out / f"stdout-{self.count}.txt", self.out / f"stderr-{self.count}.txt"
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            done = subprocess.run([rlpanel_script(), *args, "--runs-dir", str(self.runs)], stdout=stdout, stderr=stderr,
                                  stdin=subprocess.DEVNULL, env=self.env, cwd=self.user, timeout=timeout)
        text, errors = out.read_bytes().decode("utf-8"), err.read_bytes().decode("utf-8")  # UTF-8, or this raises
        assert "Traceback" not in errors and "UnicodeEncodeError" not in errors, f"rlpanel {' '.join(args)}:\n{errors}"
        assert done.returncode == code, f"rlpanel {' '.join(args)} exited {done.returncode}:\n{errors[-3000:]}"
        return text


def rlpanel_script() -> str:
    """The ``rlpanel`` console script of this Python's install, as a user starts it (``rlpanel.exe`` on Windows)."""
    script = Path(sys.executable).with_name("rlpanel.exe" if sys.platform.startswith("win") else "rlpanel")
    assert script.is_file(), f"{script} is missing: install rlpanel into this Python (pip install .)"
    return str(script)


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Night:
    """Two seeds of PPO (spawned env processes, 1,024 steps each) and a random baseline, trained by the command."""
    night = Night(tmp_path_factory.mktemp("windows night"))
    group = json.loads(night.run("train", "--algo", "PPO", "--env", "CartPole-v1", "--timesteps", "1024", "--seeds", "2",
                                 "--name", "ppo", *SPAWNED, "--json"))
    night.group = [run["id"] for run in group["runs"]]  # type: ignore[attr-defined]
    night.group_id = group["group"]  # type: ignore[attr-defined]
    assert [run["state"] for run in group["runs"]] == ["finished", "finished"], group
    base = json.loads(night.run("train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "5", "--name", "base",
                                "--json"))
    night.baseline = base["id"]  # type: ignore[attr-defined]
    return night


def test_train_resume_and_name_in_a_folder_with_umlauts(night):
    first = night.group[0]
    assert str(night.runs) in night.run("runs", first)  # the run's folder, under "Jürgen Müller/runs dir"
    resumed = json.loads(night.run("resume", first, "--timesteps", "256", "--json"))
    assert resumed["state"] == "finished" and "reached 1,280 of 1,280 steps" in resumed["reason"], resumed
    night.run("annotate", first, "--name", NAME, "--note", "über Nacht")
    assert NAME in night.run("runs")  # the listing holds the name as typed, written to a cp1252 file
    assert NAME in night.run("runs", first)


def test_report_and_every_export_format_to_a_redirected_stream_and_to_files(night):
    import openpyxl

    report = night.run("report", "--since", "2000-01-01 00:00")
    assert "Δ" in report or "→" in report, report[:2000]  # the group against the baseline: the characters cp1252 lacks
    night.run("report", "--since", "2000-01-01 00:00", "-o", str(night.out / "morning.md"))
    assert (night.out / "morning.md").read_text(encoding="utf-8").strip()
    for fmt in ("md", "csv", "tex", "html", "json"):
        printed = night.run("export", "--all", "--group-by", "group", "--baseline", night.baseline, "--format", fmt)
        assert "ppo" in printed.lower(), f"{fmt}: {printed[:500]}"
    for fmt in ("md", "csv", "xlsx", "tex", "html"):
        path = night.out / f"Tabelle für {fmt}.{fmt}"
        night.run("export", "--all", "--group-by", "group", "--baseline", night.baseline, "-o", str(path))
        data = path.read_bytes()
        if fmt == "csv":
            assert data.startswith(b"\xef\xbb\xbf"), data[:20]  # UTF-8 with the BOM Excel needs to read it as UTF-8
        if fmt == "xlsx":
            assert openpyxl.load_workbook(path).active.max_row >= 2
        else:
            data.decode("utf-8")


def test_the_agent_tools_write_into_the_umlaut_folder(night):
    """What the first night's last step does (README "Your first night", step 6), with the plain install's packages."""
    last = night.group[1]
    evaluated = json.loads(night.run("evaluate", last, "--episodes", "3", "--json"))
    assert evaluated["episodes"] == 3, evaluated
    for fmt, name in (("onnx", "Agent für C#.onnx"), ("torchscript", "Agent für C++.pt")):
        night.run("export-policy", last, "--format", fmt, "-o", str(night.out / name), "--check")
        assert (night.out / name).stat().st_size > 0
    night.run("record", last, "-o", str(night.out / "Video für Anna.mp4"))
    assert (night.out / "Video für Anna.mp4").read_bytes()[4:8] == b"ftyp"  # an MP4 file, imageio-ffmpeg's


def test_every_command_answers_without_a_traceback(night):
    """The commands a morning uses, and every command's help, printed to a cp1252 file."""
    for args in (("presets",), ("doctor",), ("gpus",), ("estimate", "--algo", "PPO", "--env", "CartPole-v1"),
                 ("runs", "--group", night.group_id), ("queue", "status"), ("notify", "show"),
                 ("zoo", "export", night.group[0])):
        night.run(*args)
    from core.cli.main import COMMAND_MODULES

    for command in COMMAND_MODULES:
        assert "usage:" in night.run(command, "--help"), command
