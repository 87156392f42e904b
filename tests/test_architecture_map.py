"""ARCHITECTURE.md's package map cannot drift silently: every package and module it names exists, every package
of core/ and app/ is named, app/ keeps at most 8 modules of its own, and package __init__ files hold a docstring."""

from __future__ import annotations

import re

from tests.conftest import REPO

ENTRY = re.compile(r"^((?:(?:core|app)(?:/\w+)*/\s+)+)(.*)$")  # "core/run/   layout (RunDir), states, ..."
NAME = re.compile(r"^(\w+)(\.py|/)?$")
APP_MODULES = 8


def package_map() -> dict[str, list[str]]:
    """package path -> the names its entry lists (parenthesised words dropped)."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("## The packages", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    current: list[str] = []
    for line in block.splitlines():
        if match := ENTRY.match(line):
            current = match.group(1).split()
            for path in current:
                entries[path.rstrip("/")] = ""
            rest = match.group(2)
        elif re.match(r"^\S", line):  # another top-level entry (configs/, tests/, ...): not a package of ours
            current = []
            continue
        else:
            rest = line
        for path in current:
            entries[path.rstrip("/")] += " " + rest
    return {path: _names(words) for path, words in entries.items()}


def _names(words: str) -> list[str]:
    flat, depth = [], 0
    for ch in words:  # drop what is in parentheses, nested ones too
        depth += ch == "("
        if depth == 0:
            flat.append(ch)
        depth -= ch == ")" and depth > 0
    return [part.strip() for part in re.split(r"[,;]", "".join(flat)) if part.strip()]


def test_every_name_in_the_package_map_is_a_module_or_package_that_exists():
    wrong = []
    for package, names in package_map().items():
        if not (REPO / package / "__init__.py").is_file():
            wrong.append(f"{package}/: no such package")
        for name in names:
            match = NAME.match(name)
            if not match:
                wrong.append(f"{package}/: {name!r} is not a module name (describe it in parentheses)")
            elif not ((REPO / package / f"{match.group(1)}.py").is_file()
                      or (REPO / package / match.group(1) / "__init__.py").is_file()):
                wrong.append(f"{package}/{match.group(1)}: named in ARCHITECTURE.md, not in the code")
    assert not wrong, "\n".join(wrong)


def test_every_package_and_module_of_core_and_app_is_in_the_map():
    mapped = package_map()
    missing = []
    for init in sorted([*(REPO / "core").rglob("__init__.py"), *(REPO / "app").rglob("__init__.py")]):
        package = init.parent.relative_to(REPO).as_posix()
        if package == "core":
            continue  # the library's root holds its packages only
        named = {NAME.match(n).group(1) for n in mapped.get(package, []) if NAME.match(n)}
        parent, _, leaf = package.rpartition("/")
        if package not in mapped and leaf not in {NAME.match(n).group(1) for n in mapped.get(parent, []) if NAME.match(n)}:
            missing.append(f"{package}/: a package the map does not name")
            continue
        if package not in mapped:
            continue  # named as a subpackage of its parent's entry, described there
        for module in sorted(init.parent.glob("*.py")):
            if module.stem not in ("__init__", "__main__") and module.stem not in named:
                missing.append(f"{package}/{module.name}: not in ARCHITECTURE.md's package map")
    assert not missing, "\n".join(missing)


def test_app_keeps_at_most_8_modules_of_its_own():
    own = sorted(p.name for p in (REPO / "app").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(own) <= APP_MODULES, own


def test_package_init_files_hold_a_docstring_only():
    """Everything is imported from the module that defines it (app/__init__ loads pydantic before Qt: the exception)."""
    import ast

    code = []
    for init in sorted([*(REPO / "core").rglob("__init__.py"), *(REPO / "app").rglob("__init__.py")]):
        if init == REPO / "app" / "__init__.py":
            continue
        body = ast.parse(init.read_text(encoding="utf-8")).body
        if [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]:
            code.append(init.relative_to(REPO).as_posix())
    assert code == [], code
