"""ARCHITECTURE.md stays a map, and cannot drift from the packages: it is at most 200 lines, names every package
of core/ and app/, names no package or module that is gone; every package's __init__ says what lives there (a
docstring, and only that), and app/ keeps at most 8 modules of its own. What a package holds is said in its own
docstring, next to its code, so a new module needs no edit here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

MAP_LINES = 200
APP_MODULES = 8
PATH_NAME = re.compile(r"(?<![\w./-])((?:core|app)(?:/\w+)+)(/|\.py\b)?")  # core/run/cache/, core/cli/main.py
DOTTED_NAME = re.compile(r"(?<![\w./-])((?:core|app)(?:\.\w+)+)")  # core.launch.start.start_run


def the_map() -> str:
    return (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")


def packages() -> list[Path]:
    """Every package under core/ and app/, the two roots included."""
    return sorted(init.parent for root in ("core", "app") for init in (REPO / root).rglob("__init__.py"))


def package_name(package: Path) -> str:
    return package.relative_to(REPO).as_posix()


def named(package: str, text: str) -> bool:
    """Whether the map names the package, as a folder (core/run/cache/) or as a module path (core.run.cache)."""
    dotted = package.replace("/", ".")
    return bool(re.search(rf"(?<![\w./-]){re.escape(package)}(?![\w])", text)
                or re.search(rf"(?<![\w./-]){re.escape(dotted)}(?![\w])", text))


def test_the_map_is_at_most_200_lines():
    lines = the_map().splitlines()
    assert len(lines) <= MAP_LINES, f"ARCHITECTURE.md has {len(lines)} lines: move the detail to a docs/ page or to " \
                                    f"the package's __init__ docstring"


def test_every_package_says_what_lives_there():
    empty = [package_name(p) for p in packages()
             if not (ast.get_docstring(ast.parse((p / "__init__.py").read_text(encoding="utf-8"))) or "").strip()]
    assert empty == [], f"packages whose __init__.py has no docstring (say what lives there and what not): {empty}"


def test_every_package_is_named_in_the_map():
    text = the_map()
    missing = [name for name in map(package_name, packages()) if name not in ("core", "app") and not named(name, text)]
    assert missing == [], f"packages ARCHITECTURE.md does not name (a line under 'The packages'): {missing}"


def _exists(parts: list[str], suffix: str | None) -> bool:
    path = REPO.joinpath(*parts)
    if suffix == ".py":
        return path.with_suffix(".py").is_file()
    if suffix == "/":
        return (path / "__init__.py").is_file()
    return (path / "__init__.py").is_file() or path.with_suffix(".py").is_file()


def _dotted_exists(name: str) -> bool:
    """A module or package, or up to two attributes of one (core.launch.start.start_run, RunDir.status)."""
    parts = name.split(".")
    return any(_exists(parts[:end], None) for end in range(len(parts), max(len(parts) - 3, 0), -1))


def test_every_package_and_module_the_map_names_exists():
    text = the_map()
    wrong = [m.group(0) for m in PATH_NAME.finditer(text) if not _exists(m.group(1).split("/"), m.group(2))]
    wrong += [m.group(1) for m in DOTTED_NAME.finditer(text) if not _dotted_exists(m.group(1))]
    assert wrong == [], f"ARCHITECTURE.md names what is not in the code: {sorted(set(wrong))}"


def test_the_name_checks_tell_a_stale_name():
    assert not _exists(["core", "no_such_package"], "/")
    assert _exists(["core", "util"], "/") and _exists(["core", "util", "files"], ".py")
    assert not _dotted_exists("core.util.no_such_module.attr.more.deeper")
    assert named("core/util", "the bottom: `core/util/` files") and not named("core/util", "core/utility")


def test_app_keeps_at_most_8_modules_of_its_own():
    own = sorted(p.name for p in (REPO / "app").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(own) <= APP_MODULES, own


def test_package_init_files_hold_a_docstring_only():
    """Everything is imported from the module that defines it (app/__init__ loads pydantic before Qt: the exception)."""
    code = []
    for package in packages():
        init = package / "__init__.py"
        if init == REPO / "app" / "__init__.py":
            continue
        body = ast.parse(init.read_text(encoding="utf-8")).body
        if [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]:
            code.append(init.relative_to(REPO).as_posix())
    assert code == [], code
