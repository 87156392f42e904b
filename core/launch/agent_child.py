"""Run a ``core.agent`` tool on a run's checkpoint as a child process: what the CLI and the window call.

The tools load torch and SB3, which neither the window nor the command line do (ARCHITECTURE.md,
"Layers"), so each runs as ``python -m core.agent.<tool> RUN ...`` in the run's import folder (a custom
env is found as the worker finds it). A tool prints its result as one JSON line last on stdout; a failure
exits non-zero with one line on stderr that says why, which ``PolicyToolError`` carries.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.launch.control import import_folder
from core.util.console import CHILD_TEXT
from core.util.paths import CODE_ROOT
from core.util.procs import child_env


class PolicyToolError(RuntimeError):
    """A policy tool ended without a result: the message is its last line (what to fix)."""


def policy_command(tool: str, run_dir: Path, *args: str) -> list[str]:
    """``python -m core.agent.<tool> RUN_DIR ARGS``."""
    return [sys.executable, "-m", f"core.agent.{tool}", str(Path(run_dir).resolve()), *args]


def tool_folder(run_dir: Path) -> str | None:
    """The folder a tool starts in: the run's import folder. A config.yaml that cannot be read (damaged, missing)
    gives none here: the tool reads it too and says what is wrong in its one line, as for any other failure."""
    try:
        return import_folder(run_dir)
    except ValueError:
        return None


def start_policy_tool(tool: str, run_dir: Path, *args: str, **popen: Any) -> subprocess.Popen[bytes]:
    """Start a tool that streams (Watch): the caller reads its stdout and ends it."""
    folder = tool_folder(run_dir)
    return subprocess.Popen(policy_command(tool, run_dir, *args), env=child_env(folder=folder),
                            cwd=folder or str(CODE_ROOT), stdin=subprocess.DEVNULL, **popen)


def run_policy_tool(tool: str, run_dir: Path, *args: str, timeout: float | None = None) -> dict[str, Any]:
    """Run a tool to its end and return the JSON object it printed last; raises ``PolicyToolError``."""
    folder = tool_folder(run_dir)
    try:
        done = subprocess.run(policy_command(tool, run_dir, *args), env=child_env(folder=folder),
                              cwd=folder or str(CODE_ROOT), stdin=subprocess.DEVNULL, capture_output=True,
                              **CHILD_TEXT, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PolicyToolError(f"{tool} did not finish within {timeout:g} s") from None
    return tool_result(tool, done.returncode, done.stdout, done.stderr)


def wait_policy_tool(tool: str, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Wait for a tool ``start_policy_tool`` started with ``stdout=PIPE, stderr=PIPE`` (another thread may
    ``kill()`` it: a cancel) and return its result; raises ``PolicyToolError``."""
    stdout, stderr = proc.communicate()
    return tool_result(tool, proc.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))


def tool_result(tool: str, returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The JSON object a tool printed last, or ``PolicyToolError`` with its last line."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if returncode == 0 and lines:
        try:
            result = json.loads(lines[-1])
        except json.JSONDecodeError:
            result = None
        if isinstance(result, dict):
            return result
    raise PolicyToolError(_last_words(stderr) or f"{tool} ended with exit code {returncode} and no result")


def _last_words(stderr: str) -> str:
    """The line a tool ended with (a traceback's last line), for a message."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else ""
