"""The import contracts: core has no Qt; nothing outside core.training loads torch or SB3."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PROBE = """
import importlib, json, pkgutil, sys
import core
names = [m.name for m in pkgutil.walk_packages(core.__path__, "core.")
         if not m.name.startswith("core.training") and not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
from core.cli.main import build_parser
build_parser()
heavy = sorted(m for m in ("torch", "stable_baselines3", "PySide6", "pyqtgraph") if m in sys.modules)
print(json.dumps({"modules": names, "heavy": heavy}))
"""


def test_importing_core_loads_neither_qt_nor_torch():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, check=True)
    data = json.loads(out.stdout)
    assert {"core.config.schema", "core.config.presets", "core.run.store", "core.cli.main", "core.run.control"} <= set(data["modules"])
    assert data["heavy"] == []


def test_import_linter_contracts_hold():
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        exe = Path(shutil.which("lint-imports") or "")
    if not exe.is_file():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run([exe], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "BROKEN" not in out.stdout


def test_ruff_is_clean():
    exe = Path(sys.executable).with_name("ruff")
    if not exe.is_file():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    out = subprocess.run([str(exe), "check", "core", "app", "tests", "bench"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
