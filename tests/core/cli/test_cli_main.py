"""The ``rlpanel`` parser: a command line imports only the module of the command it names."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.cli.main import COMMAND_MODULES, COMMANDS, Parser, command_word
from tests.conftest import REPO


def test_every_command_is_mapped_to_the_module_that_registers_it():
    import importlib

    registered = {}
    for name in COMMANDS:
        sub = Parser(prog="rlpanel").add_subparsers(dest="command")
        importlib.import_module(f"core.cli.{name}").register(sub, Parser(add_help=False))
        registered.update(dict.fromkeys(sub.choices, name))
    assert COMMAND_MODULES == registered


@pytest.mark.parametrize(("argv", "word"), [(["runs"], "runs"), (["--runs-dir", "/tmp/x", "train", "--algo", "PPO"], "train"),
                                            (["--json", "runs", "ID"], "runs"), (["--runs-dir=/r", "stop"], "stop"),
                                            (["--help"], None), ([], None), (["--runs-dir"], None)])
def test_the_command_word_skips_options_and_the_runs_folder(argv, word):
    assert command_word(argv) == word


def test_a_command_imports_its_own_module_alone(runs_dir):
    code = ("import sys; from core.cli.main import main; code = main(['runs']); "
            "print(code, sorted(m for m in sys.modules if m.startswith('core.cli.') and m != 'core.cli.main'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    code, modules = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert code == "0" and "core.cli.runs" in modules and "core.cli.export" not in modules and "core.cli.sweep" not in modules
    unknown = subprocess.run([sys.executable, "-m", "core.cli", "trian"], cwd=REPO, capture_output=True, text=True,
                             timeout=120)
    assert unknown.returncode == 2 and "invalid choice: 'trian'" in unknown.stderr, unknown.stderr


@pytest.mark.parametrize("argv", [["--runs-dir", "X", "--json", "doctor"], ["doctor", "--runs-dir", "X", "--json"],
                                  ["--json", "doctor", "--runs-dir", "X"]])
def test_the_runs_folder_and_json_hold_before_or_after_the_command(argv):
    """``rlpanel --runs-dir X doctor`` read the default folder: the command's own default overwrote X."""
    from core.cli.main import build_parser

    args = build_parser().parse_args(argv)
    assert (args.runs_dir, args.json) == ("X", True)
    plain = build_parser().parse_args(["doctor"])
    assert (plain.runs_dir, plain.json) == (None, False)
