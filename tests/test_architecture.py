"""The import contracts: core has no Qt; nothing outside core.worker and core.agent loads torch, SB3 or SBX's jax."""

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
         if not m.name.startswith(("core.worker", "core.agent")) and not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
from core.cli.main import build_parser
build_parser()
heavy = sorted(m for m in ("torch", "stable_baselines3", "sbx", "jax", "PySide6", "pyqtgraph") if m in sys.modules)
print(json.dumps({"modules": names, "heavy": heavy}))
"""


def test_importing_core_loads_neither_qt_nor_torch():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, check=True)
    data = json.loads(out.stdout)
    assert {"core.config.schema", "core.config.presets", "core.run.store", "core.cli.main",
            "core.launch.control"} <= set(data["modules"])
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


def import_cycles(graph, modules: set[str]) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph.find_modules_directly_imported_by(module) & modules:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_through_others():
    """Not even a package and its own modules: every import graph of core and app is a DAG, the imports made only for
    the type checker included (a narrow Protocol instead: ``core.sweep.launch.TrialHost``, ``app.run_actions.ActionHost``)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("core", "app", exclude_type_checking_imports=False)
    modules = {m for m in graph.modules if m.split(".")[0] in ("core", "app")}
    assert len(modules) > 50
    assert import_cycles(graph, modules) == []


def test_the_cycle_finder_finds_a_cycle():
    class Graph:
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.edges.get(m, set())

    assert import_cycles(Graph(), {"a", "b", "c", "d"}) == [["a", "b", "c"]]


@pytest.mark.timeout(600)  # ~1 min of CPU over core and app; a loaded machine stretches it
def test_mypy_is_clean():
    """core/ and app/ type-check strictly (the [tool.mypy] sections of pyproject.toml; pyqtgraph through typings/)."""
    exe = Path(sys.executable).with_name("mypy")
    if not exe.is_file():
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    out = subprocess.run([str(exe)], capture_output=True, text=True, cwd=REPO, timeout=580)
    assert out.returncode == 0, out.stdout + out.stderr


def test_documents_the_code_points_to_exist():
    """Every upper-case Markdown file and every docs/ page the repository mentions is in it, and every section
    that a docstring cites by name (ARCHITECTURE.md, "Layers"; docs/config.md, "Config file shape") is a heading
    of that page."""
    import re

    files = [p for p in REPO.rglob("*") if p.suffix in (".py", ".md", ".toml") and p.is_file()
             and not {".venv", ".git", "build", ".mypy_cache"} & set(p.relative_to(REPO).parts)]
    missing, sections = [], []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for doc in {*re.findall(r"\b([A-Z][A-Z_]+\.md)\b", text), *re.findall(r"(?<![\w/])(docs/[\w/-]+\.md)", text)}:
            if not (REPO / doc).is_file():
                missing.append(f"{path.relative_to(REPO)} -> {doc}")
        cited = re.findall(r'(?<![\w/])((?:docs/[\w/-]+|ARCHITECTURE)\.md),\s*(?:#\s*)?"([^"]+)"', text)
        sections += [(path.relative_to(REPO), doc, s) for doc, s in cited]
    assert missing == []
    headings = {doc: set(re.findall(r"^#+ (.+)$", (REPO / doc).read_text(encoding="utf-8"), re.M))
                for doc in {doc for _, doc, _ in sections} if (REPO / doc).is_file()}
    assert sections and [(p, d, s) for p, d, s in sections if s not in headings.get(d, set())] == []
