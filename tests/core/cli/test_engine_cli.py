"""``--set runtime.engine=sbx`` where sbx is not installed (the README's plain install) ends ``rlpanel train`` with the
one line that says what to install, never a traceback; a config SBX cannot run is refused before any run is made.

Marked ``plain``: ``.ci/plain-check`` runs it again in the wheel installed with no extras, where sbx is truly absent.
Here the child hides it (``sys.modules['sbx'] = None``: ``find_spec`` then answers that it cannot be imported).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.plain

NO_SBX = "import sys; sys.modules['sbx'] = None; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"


def train(*args: str, home) -> subprocess.CompletedProcess:
    runs = home / "runs"
    return subprocess.run([sys.executable, "-c", NO_SBX, "train", *args, "--runs-dir", str(runs)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "RLPANEL_HOME": str(home)}, cwd=home)


def test_an_sbx_run_without_sbx_names_the_install_and_makes_no_run(tmp_path):
    done = train("--algo", "SAC", "--env", "Pendulum-v1", "--set", "runtime.engine=sbx", home=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert ('runtime.engine: engine sbx needs the sbx-rl package (JAX), which is not installed here: pip install '
            '"rlpanel[jax]", or set runtime.engine: sb3') in done.stderr
    runs = tmp_path / "runs"
    assert not runs.exists() or not any(runs.iterdir())


def test_an_algorithm_sbx_lacks_is_refused_before_launch(tmp_path):
    done = train("--algo", "A2C", "--env", "CartPole-v1", "--set", "runtime.engine=sbx", home=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "algo: A2C has no SBX (JAX) version; SBX trains PPO, SAC, TD3, DDPG, DQN, TQC or CrossQ" in done.stderr
