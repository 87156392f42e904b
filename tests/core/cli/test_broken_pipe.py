"""A reader that closes the pipe early (``rlpanel runs | head``): the command ends quietly, no "Broken pipe"."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.cli.main import BROKEN_PIPE_EXIT
from tests.training_helpers import REPO


@pytest.mark.parametrize("args", [["runs"], ["presets"], ["presets", "--json"], ["--help"]])
def test_a_reader_closing_early_ends_the_command_quietly(args, runs_dir):
    child = subprocess.Popen([sys.executable, "-m", "core.cli", *args, "--runs-dir", str(runs_dir)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # the reader goes before the command has written a line (python takes a second to start)
    err = child.stderr.read().decode()
    # 141 as a shell says of ``yes | head``; argparse's --help already ignores a failed write and exits 0
    assert child.wait(timeout=120) == (0 if args == ["--help"] else BROKEN_PIPE_EXIT), err
    assert err == ""  # no "rlpanel runs: Broken pipe", no "Exception ignored ... BrokenPipeError"
