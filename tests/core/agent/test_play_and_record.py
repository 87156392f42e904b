"""Issue 26, Watch and Record: the player streams CartPole's frames with the right headers, an env that draws
nothing says so in one line, and a recorded video holds the frames played (read back from the file)."""

from __future__ import annotations

import json
import subprocess
import sys

import imageio.v2 as imageio
import pytest
from PIL import Image

from core.cli.main import main
from core.launch.agent_child import policy_command, start_policy_tool
from core.run.frame_stream import StreamEnd, StreamFrame, read_record
from core.util.procs import child_env
from tests.core.agent.agent_runs import no_frames_copy
from tests.training_helpers import cli, copy_run

pytestmark = pytest.mark.training

CARTPOLE_PX = (600, 400)  # CartPole's rgb_array frame, width x height
CARTPOLE_FPS = 50.0  # its metadata["render_fps"]
CAPTION_PX = 28  # the caption bar above each frame of --all-checkpoints (core.agent.video.captioned)


@pytest.fixture(scope="module")
def agent_run(trained_run, tmp_path_factory):
    """One copy of the trained PPO CartPole run (three checkpoints) for this module's tools, which only read it."""
    return copy_run(trained_run, tmp_path_factory.mktemp("agent_runs"))


def test_the_player_streams_cartpole_frames_with_their_headers(agent_run):
    proc = start_policy_tool("play", agent_run, "--stream", "--episodes", "2", stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    records = []
    while (record := read_record(proc.stdout)) is not None:
        records.append(record)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    frames, end = records[:-1], records[-1]
    assert isinstance(end, StreamEnd) and all(isinstance(f, StreamFrame) for f in frames)
    lengths = end.result["lengths"]
    assert end.result["episodes"] == 2 and len(frames) == 1 + sum(lengths) == end.result["frames"]
    assert {(f.width, f.height, f.fps) for f in frames} == {(*CARTPOLE_PX, CARTPOLE_FPS)}
    assert all(len(f.rgb) == f.width * f.height * 3 for f in frames)
    assert (frames[0].episode, frames[0].step, frames[0].reward) == (1, 0, 0.0)
    # the step counts up within an episode, the reward is the sum of the last rewards, done ends each episode
    first = frames[1: 1 + lengths[0]]
    assert [f.step for f in first] == list(range(1, lengths[0] + 1))
    assert [f.done for f in first] == [False] * (lengths[0] - 1) + [True]
    assert first[-1].reward == pytest.approx(sum(f.last_reward for f in first)) == end.result["rewards"][0]
    assert frames[1 + lengths[0]].episode == 2 and frames[-1].done
    assert len({f.rgb for f in frames[:10]}) > 1, "the pictures change as the pole moves"


def test_an_env_that_draws_no_frames_says_so_in_one_line(trained_run, tmp_path):
    run = no_frames_copy(trained_run, tmp_path / "runs")
    done = subprocess.run(policy_command("play", run), capture_output=True, text=True, timeout=120,
                          env=child_env(), cwd=str(run))
    assert done.returncode == 1 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("tests.core.agent.agent_runs:NoFramesEnv cannot render frames: render() gave no picture")
    assert "Traceback" not in done.stderr


def gif_duration_ms(path) -> tuple[int, int]:
    """The frames Pillow stored and their delays added up (Pillow merges a frame identical to the one before)."""
    image = Image.open(path)
    count = total = 0
    while True:
        total += image.info["duration"]
        count += 1
        try:
            image.seek(image.tell() + 1)
        except EOFError:
            return count, total


def test_rlpanel_record_writes_a_gif_of_the_frames_played(agent_run, tmp_path):
    video = tmp_path / "agent.gif"
    done = cli("record", agent_run.name, "--runs-dir", str(agent_run.parent), "-o", str(video), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # CartPole pays 1 a step: an episode's reward is its length; the frames are the reset's and one a step
    assert result["frames"] == 1 + sum(result["rewards"]) and result["episodes"] == 1
    assert (result["width"], result["height"], result["fps"]) == (*CARTPOLE_PX, CARTPOLE_FPS)
    stored, duration_ms = gif_duration_ms(video)
    assert duration_ms == result["frames"] * 20 and 1 < stored <= result["frames"]
    assert Image.open(video).size == CARTPOLE_PX
    assert result["seconds"] == pytest.approx(result["frames"] / CARTPOLE_FPS)


def test_record_of_every_checkpoint_is_one_captioned_mp4_in_step_order(agent_run, tmp_path):
    video = tmp_path / "learned.mp4"
    done = subprocess.run([*policy_command("record", agent_run), "-o", str(video), "--all-checkpoints"],
                          capture_output=True, text=True, timeout=180, env=child_env())
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    steps = [s["checkpoint_step"] for s in result["segments"]]
    assert steps == sorted(steps) and len(steps) == 3
    assert result["frames"] == sum(1 + sum(s["rewards"]) for s in result["segments"])
    reader = imageio.get_reader(str(video))
    try:
        assert reader.count_frames() == result["frames"]
        assert tuple(reader.get_meta_data()["size"]) == (CARTPOLE_PX[0], CARTPOLE_PX[1] + CAPTION_PX)
    finally:
        reader.close()


def test_record_refuses_a_bad_file_or_run_in_one_line(agent_run, tmp_path, capsys):
    base = ["--runs-dir", str(agent_run.parent)]
    assert main(["record", agent_run.name, *base, "-o", str(tmp_path / "agent.avi")]) == 2
    assert capsys.readouterr().err.strip() == (f"rlpanel record: -o {tmp_path / 'agent.avi'}: the file must end in .mp4 "
                                               "or .gif (e.g. -o agent.mp4)")
    assert main(["record", "no-such-run", *base, "-o", str(tmp_path / "agent.gif")]) == 1
    assert "no run 'no-such-run'" in capsys.readouterr().err
    existing = tmp_path / "kept.gif"
    existing.write_bytes(b"GIF89a")
    assert main(["record", agent_run.name, *base, "-o", str(existing), "--checkpoint", "7"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"rlpanel record: -o {existing}: the file exists; choose another name or add --overwrite"
    assert existing.read_bytes() == b"GIF89a"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux needs a DISPLAY")
def test_rlpanel_watch_without_a_display_says_so(agent_run, monkeypatch, capfd):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(["watch", agent_run.name, "--runs-dir", str(agent_run.parent)]) == 2
    assert capfd.readouterr().err.strip() == "rlpanel watch: no display to open the window on (DISPLAY is not set)"
