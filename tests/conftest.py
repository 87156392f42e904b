"""Shared fixtures: an isolated user folder for every test, offscreen Qt, the repo's python."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest_plugins = ["tests.fakenvml"]

# Without a display Qt aborts the whole run (exit 134): choose offscreen before Qt loads.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch a real NVIDIA driver unless a test puts a fake one on the path.
os.environ.setdefault("RLPANEL_TEST", "1")

REPO = Path(__file__).resolve().parent.parent


def kill_detached(marker: str) -> None:
    """Kill workers, their supervisors and queue runners a test left behind (they are detached: nobody else will)."""
    import psutil

    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        ours = any(m in cmd for m in ("core.worker.main", "core.queue.runner", "core.sweep.runner", "core.launch.supervisor",
                                      " -c "))
        if marker in cmd and proc.pid != os.getpid() and ours:
            try:
                for p in [proc, *proc.children(recursive=True)]:
                    p.kill()
            except psutil.Error:
                pass


@pytest.fixture(autouse=True)
def user_home(tmp_path_factory, monkeypatch):
    """Every test gets its own RLPANEL_HOME (presets, runs, queue state)."""
    home = tmp_path_factory.mktemp("rlpanel_home")
    monkeypatch.setenv("RLPANEL_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))  # a start-up entry never lands in ~/.config
    yield home
    if any(home.iterdir()):  # a process left behind names a file in it: an empty home spares a scan of every process
        kill_detached(str(home))


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[EXIT_STATUS] = int(exitstatus)
    basetemp = getattr(session.config, "_tmp_path_factory", None)
    if basetemp is not None:
        try:
            kill_detached(str(basetemp.getbasetemp()))
        except (OSError, ValueError):
            pass


EXIT_STATUS = pytest.StashKey[int]()
FAULT_TALLY: Counter[str] = Counter()  # the fault suite's counts, summed from the test reports

HEAVY_MODULES = ("torch", "stable_baselines3", "sb3_contrib")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A test module that imports torch, SB3 or sb3-contrib at its top loads them into the test
    process for every test after it, and the window's "never imports torch" tests then fail far
    from the cause: collection stops here with an error naming the module."""
    before = {name for name in HEAVY_MODULES if name in sys.modules}
    outcome = yield
    if not isinstance(collector, pytest.Module):
        return
    loaded = [name for name in HEAVY_MODULES if name in sys.modules and name not in before]
    if loaded:
        report = outcome.get_result()
        report.outcome = "failed"
        report.longrepr = (f"{collector.path}: importing this test module loads {', '.join(loaded)} into the test process; "
                           "import them inside the tests that use them")


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (``-n 2 --dist loadgroup --no-loadscope-reorder``, the default): the window's tests
    are one group, the first collected, so one worker runs it before anything else (they check that the
    window never imports torch, which other tests load into their process); a module whose tests may share a
    fixture of module scope (a trained model, a Ray head) is a group of its own, so that fixture is made once;
    every other test is scheduled alone, so neither worker is left with a long module at the end.

    A scheduler of our own rather than ``xdist_group`` marks: xdist 3.8 groups by a suffix it writes into
    ``item._nodeid``, which pytest 9 no longer reads (``nodeid`` comes from ``item._id``), so marks added in
    ``pytest_collection_modifyitems`` grouped nothing: every module was split across both workers, its module
    fixtures made twice (the Ray head included). Another ``--dist`` asked for on the command line is xdist's."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TestGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return TestGroups(config, log)


MODULE_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*scope=[\"'](module|package)[\"']")


def work_unit(nodeid: str) -> str:
    """The work unit a test is scheduled in: ``gui``, its module's path, or its own id."""
    path = nodeid.split("::", 1)[0]
    if path.startswith("tests/app/"):
        return "gui"
    return path if _defines_a_module_fixture(path) else nodeid


@functools.cache
def _defines_a_module_fixture(path: str) -> bool:
    """Whether the module, or a conftest.py between it and ``tests/``, defines a fixture of module or package scope."""
    module = REPO / path
    files = [module, *(folder / "conftest.py" for folder in module.parents if folder.is_relative_to(REPO / "tests"))]
    return any(f.is_file() and MODULE_FIXTURE.search(f.read_text(encoding="utf-8")) for f in files)


def pytest_collection_modifyitems(config, items):
    """In an xdist worker: the modules with a test that trains go first, the window's tests ahead of them (each
    module kept whole, in its order). The short tests left for the end fill whichever worker is free; a
    training module collected near the end (the fault suite's) would run alone while the other worker waits."""
    if not hasattr(config, "workerinput"):
        return
    trains = {item.path for item in items if item.get_closest_marker("training") is not None}

    def rank(item) -> int:
        return 0 if item.path.is_relative_to(REPO / "tests" / "app") else 1 if item.path in trains else 2

    items.sort(key=rank)  # stable: the collection's order within each rank


def pytest_runtest_logreport(report):
    if report.when == "teardown":
        from tests.faults.conftest import TALLY_PROPERTY

        for name, counts in report.user_properties:
            if name == TALLY_PROPERTY:
                FAULT_TALLY.update(counts)


def pytest_terminal_summary(terminalreporter):
    from tests.faults.conftest import summary_lines

    lines = summary_lines(FAULT_TALLY)
    if lines:
        terminalreporter.section("fault suite (issue 11)")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """After every report is out, a session that used Qt leaves without tearing the interpreter
    down: PySide6 can crash (exit 139) destroying the wrappers of widgets Qt already deleted,
    after every test passed. The exit status is pytest's own."""
    if "PySide6.QtWidgets" in sys.modules and EXIT_STATUS in config.stash:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash[EXIT_STATUS])


@pytest.fixture
def runs_dir(user_home: Path) -> Path:
    path = user_home / "runs"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def python() -> str:
    return sys.executable


def _trained_in_own_home(folder: Path, train) -> Path:
    """``train(folder / "runs")`` with RLPANEL_HOME at ``folder`` (a session's run outlives every test's own home)."""
    old = os.environ.get("RLPANEL_HOME")
    os.environ["RLPANEL_HOME"] = str(folder)
    try:
        return train(folder / "runs")
    finally:
        if old is None:
            os.environ.pop("RLPANEL_HOME", None)
        else:
            os.environ["RLPANEL_HOME"] = old


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory) -> Path:
    """A real finished PPO run (three checkpoints), trained once per session: copy it before changing it
    (``tests.training_helpers.copy_run``)."""
    from tests.training_helpers import train_template

    return _trained_in_own_home(tmp_path_factory.mktemp("template_runs"), train_template)


@pytest.fixture(scope="session")
def sbx_trained_run(tmp_path_factory) -> Path:
    """A real finished SBX (JAX) PPO CartPole run with VecNormalize, evaluations and a best checkpoint, trained once per
    session (``tests.training_helpers.SBX_PPO_CONFIG``): copy it before changing it."""
    from tests.training_helpers import train_sbx_template

    return _trained_in_own_home(tmp_path_factory.mktemp("sbx_template_runs"), train_sbx_template)
