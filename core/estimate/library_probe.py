"""A library's facts asked once of the worker's own Python (``python -m MODULE`` in a child: the library is never
imported here) and kept per interpreter and library version, in memory and in the user folder's ``cache/``.

``core.estimate.device`` asks torch's (``core.worker.torch_probe``), ``core.estimate.jax_device`` jax's
(``core.worker.jax_probe``);
an error is returned, never kept, so the next ask tries again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.util.console import CHILD_TEXT, utf8_env
from core.util.files import read_json, write_json_atomic
from core.util.paths import CODE_ROOT, user_home


class LibraryProbe:
    """``library``'s facts from ``python -m module``; ``missing()`` says why it cannot be asked (None: it can)."""

    def __init__(self, library: str, module: str, missing: Callable[[], str | None]):
        self.library = library
        self.module = module
        self.missing = missing
        self.memo: dict[str, dict[str, Any]] = {}

    def version(self) -> str | None:
        from importlib import metadata  # here: ~40 ms of imports the window's first frame does not wait for

        try:
            return metadata.version(self.library)
        except metadata.PackageNotFoundError:
            return None

    def key(self) -> str:
        """The cache key: this interpreter and the library version it would import (read without importing it)."""
        return f"{sys.executable}|{self.library} {self.version()}"

    def cache_path(self) -> Path:
        return user_home() / "cache" / f"{self.library}-probe.json"

    def cached(self) -> dict[str, Any] | None:
        """The facts when known already (this process, or the cache file), without probing."""
        key = self.key()
        if key in self.memo:
            return self.memo[key]
        stored = (read_json(self.cache_path(), default=None) or {}).get(key)
        if isinstance(stored, dict):
            self.memo[key] = stored
            return stored
        return None

    def run(self, timeout: float = 120.0) -> dict[str, Any]:
        """The facts from a child process with this interpreter (never cached), or ``{"error": why}``."""
        why = self.missing()
        if why:
            return {"error": why}
        try:
            out = subprocess.run([sys.executable, "-m", self.module], capture_output=True, **CHILD_TEXT,
                                 env=utf8_env(os.environ), timeout=timeout, cwd=str(CODE_ROOT))
        except subprocess.TimeoutExpired:
            return {"error": f"importing {self.library} took over {timeout:g} s"}
        if out.returncode != 0:
            last = (out.stderr.strip().splitlines() or ["unknown error"])[-1]
            return {"error": f"{self.library} could not be imported: {last}"}
        facts: dict[str, Any] = json.loads(out.stdout)
        return facts

    def facts(self, refresh: bool = False, timeout: float = 120.0) -> dict[str, Any]:
        """The facts, probed once per interpreter and library version (an error is not kept)."""
        known = None if refresh else self.cached()
        if known is not None:
            return known
        facts = self.run(timeout)
        if "error" not in facts:
            key = self.key()
            self.memo[key] = facts
            path = self.cache_path()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                table = read_json(path, default=None) or {}
                table[key] = facts
                write_json_atomic(path, table)
            except OSError:
                pass  # a read-only user folder: the in-memory answer still holds for this process
        return facts
