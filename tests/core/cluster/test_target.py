"""The cluster a run goes to: its address, the nodes' python, and the runs folder as the nodes see it."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

import pytest

from core.cluster.client import ClusterError, normalize_address
from core.cluster.jobs import submission_id
from core.cluster.target import ClusterTarget


@pytest.mark.parametrize(("text", "url"), [
    ("head", "http://head:8265"),
    ("10.0.0.5:9000", "http://10.0.0.5:9000"),
    ("http://head:8265/", "http://head:8265"),
    ("https://ray.example.org", "https://ray.example.org:8265"),
])
def test_an_address_becomes_the_dashboards_url(text, url):
    assert normalize_address(text) == url


@pytest.mark.parametrize(("text", "words"), [
    ("", "empty"),
    ("ray://head:10001", "Ray Client address"),
    ("head name", "not a cluster address"),
])
def test_a_bad_address_is_refused_with_the_fix(text, words):
    with pytest.raises(ClusterError) as info:
        normalize_address(text)
    assert words in str(info.value) and "--ray http://" in str(info.value)


def test_the_nodes_see_a_run_folder_at_the_same_path_unless_mapped(tmp_path):
    run = tmp_path / "runs" / "20260101-ppo-x"
    assert ClusterTarget.make("head").node_path(run) == run
    # a laptop's runs folder mounted at /mnt/runs on Linux nodes
    assert str(ClusterTarget.make("head", runs="/mnt/runs").node_path(run)) == "/mnt/runs/20260101-ppo-x"
    # and a file inside the runs folder (the doctor's token) keeps its place under the mapping
    token = tmp_path / "runs" / ".cluster-probe" / "ab" / "token.txt"
    assert (str(ClusterTarget.make("head", runs="/mnt/runs").node_path(token, tmp_path / "runs"))
            == "/mnt/runs/.cluster-probe/ab/token.txt")
    # Windows nodes get their own separators
    assert str(ClusterTarget.make("head", runs="Z:\\runs").node_path(run)) == "Z:\\runs\\20260101-ppo-x"


def test_a_windows_laptops_runs_folder_maps_to_the_linux_nodes_mount():
    laptop_run = PureWindowsPath("Z:\\runs\\20260101-ppo-x")
    target = ClusterTarget.make("head", runs="/mnt/runs")
    assert str(target.node_path(laptop_run)) == "/mnt/runs/20260101-ppo-x"
    token = PureWindowsPath("Z:\\runs\\.cluster-probe\\ab\\token.txt")
    assert str(target.node_path(token, PureWindowsPath("Z:\\runs"))) == "/mnt/runs/.cluster-probe/ab/token.txt"
    # unmapped, the nodes would get the laptop's path: doctor says to give --ray-runs (it cannot read the token)
    assert str(ClusterTarget.make("head").node_path(laptop_run)) == "Z:\\runs\\20260101-ppo-x"


def test_a_relative_nodes_runs_folder_or_an_empty_python_is_refused():
    with pytest.raises(ClusterError, match="--ray-runs 'runs' is not an absolute path"):
        ClusterTarget.make("head", runs="runs")
    with pytest.raises(ClusterError, match="--ray-python"):
        ClusterTarget.make("head", python="py\nthon")


def test_the_entrypoint_is_quoted_for_the_nodes_shell_and_uses_their_python():
    target = ClusterTarget.make("head", python="/opt/my env/bin/python")
    cmd = target.command("core.launch.supervisor", "/mnt/runs/a b", "--resume")
    assert cmd == "'/opt/my env/bin/python' -m core.launch.supervisor '/mnt/runs/a b' --resume"
    assert ClusterTarget.make("head").command("m") == "python -m m"  # the nodes' python, never this sys.executable


def test_a_target_round_trips_through_a_status_and_a_submission_id_is_per_attempt():
    target = ClusterTarget.make("head:1234", python="/venv/bin/python", runs="/mnt/runs")
    assert ClusterTarget.from_json(target.to_json()) == target
    assert ClusterTarget.from_json(None) is None and ClusterTarget.from_json({"python": "x"}) is None
    first, second = submission_id("20260101-ppo x", 1000.0), submission_id("20260101-ppo x", 2000.5)
    assert first == "rlpanel-20260101-ppo-x-1000000" and first != second


def test_paths_here_are_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert ClusterTarget.make("head").node_path(Path("runs/r1")) == tmp_path / "runs" / "r1"
