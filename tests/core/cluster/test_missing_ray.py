"""Without the ray extra: every module still imports, and a cluster command is one line naming the extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.cli.common import CliError
from core.cluster.client import RAY_MISSING, ClusterError, job_client, require_ray
from tests.conftest import REPO

BLOCK_RAY = "import sys; sys.modules['ray'] = None; sys.modules['ray.job_submission'] = None\n"


def test_a_missing_extra_is_one_line_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.job_submission", None)
    with pytest.raises(ClusterError) as info:
        require_ray()
    assert str(info.value) == RAY_MISSING and 'pip install "rlpanel[ray]"' in RAY_MISSING
    with pytest.raises(ClusterError, match="rlpanel\\[ray\\]"):
        job_client("head")
    from argparse import Namespace

    from core.cli.ray_options import cluster_from_args

    with pytest.raises(CliError, match="rlpanel\\[ray\\]"):
        cluster_from_args(Namespace(ray="head", ray_python=None, ray_runs=None))


def test_the_commands_without_ray_say_so_and_the_modules_import(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text("jobs:\n  - {name: one, algo: PPO, env: CartPole-v1, timesteps: 600}\n")
    code = BLOCK_RAY + (
        "import core.cluster.jobs, core.cluster.doctor, core.cluster.probe, core.cluster.submit, core.cli.main\n"
        "from core.cli.main import main\n"
        f"sys.exit(main(['queue', 'run', {str(plan)!r}, '--runs-dir', {str(tmp_path / 'runs')!r}, '--ray', 'head']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 1, out.stdout + out.stderr
    assert 'pip install "rlpanel[ray]"' in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "runs" / ".queue").exists()


def test_options_that_need_an_address_say_so():
    from argparse import Namespace

    from core.cli.ray_options import target_from_args

    assert target_from_args(Namespace(ray=None, ray_python=None, ray_runs=None)) is None
    with pytest.raises(CliError, match="go with --ray ADDRESS"):
        target_from_args(Namespace(ray=None, ray_python="/venv/bin/python", ray_runs=None))
