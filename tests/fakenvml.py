"""A fake NVML library for tests: ``tests/fake_nvml/fake_nvml.c`` compiled into libnvidia-ml.so.1.

The real pynvml loads ``libnvidia-ml.so.1`` by name, so a test runs a *subprocess* with
``LD_LIBRARY_PATH`` pointing at the compiled fake and ``FAKE_NVML_CONFIG`` naming a key=value
file of readings (see the C file's header). The pytest process itself never loads it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent / "fake_nvml" / "fake_nvml.c"
REPO = Path(__file__).resolve().parent.parent
LIB_NAME = "libnvidia-ml.so.1"


def compile_fake_nvml(out_dir: Path) -> Path:
    """Compile the fake into ``out_dir/libnvidia-ml.so.1``; returns the folder to put on LD_LIBRARY_PATH."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise FileNotFoundError("no C compiler (gcc or cc) on PATH")
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O1", "-Wl,-soname," + LIB_NAME, "-o", str(out_dir / LIB_NAME), str(SOURCE)],
        check=True, capture_output=True, text=True)
    return out_dir


class FakeNvml:
    """The compiled fake plus a config file; ``env()`` is the environment for a subprocess."""

    def __init__(self, lib_dir: Path, config_path: Path):
        self.lib_dir = lib_dir
        self.config_path = config_path
        self.configure()

    def configure(self, readings: dict[str, object] | None = None, **more: object) -> None:
        """Write the readings file: keys as in fake_nvml.c (``{"gpu1.name": "B"}``, ``temperature=61``)."""
        merged = {**(readings or {}), **more}
        text = "".join(f"{key}={value}\n" for key, value in merged.items())
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.config_path)

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = str(self.lib_dir) + (os.pathsep + old if old else "")
        env["FAKE_NVML_CONFIG"] = str(self.config_path)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def run_python(self, code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run ``python -c code`` with the fake on the library path."""
        return subprocess.run([sys.executable, "-c", code, *args], env=self.env(), cwd=REPO,
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def fake_nvml_lib(tmp_path_factory) -> Path:
    """The folder holding the compiled fake libnvidia-ml.so.1 (skips without a C compiler)."""
    if sys.platform.startswith("win") or sys.platform == "darwin":
        pytest.skip("the fake NVML is a Linux shared library (LD_LIBRARY_PATH)")
    try:
        return compile_fake_nvml(tmp_path_factory.mktemp("fake_nvml"))
    except FileNotFoundError as exc:
        pytest.skip(f"fake NVML not built: {exc}")
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"fake NVML did not compile:\n{exc.stderr}")


@pytest.fixture
def fake_nvml(fake_nvml_lib: Path, tmp_path: Path) -> FakeNvml:
    """A fake NVML with default readings; call ``fake_nvml.configure(...)`` to change them."""
    return FakeNvml(fake_nvml_lib, tmp_path / "fake_nvml.cfg")


@pytest.fixture
def no_nvml_env() -> dict[str, str]:
    """An environment for a subprocess in which NVML cannot load (skips if a real driver is here)."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("FAKE_NVML_CONFIG", None)
    env["PYTHONPATH"] = str(REPO)
    probe = subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libnvidia-ml.so.1')"],
                           env=env, capture_output=True)
    if probe.returncode == 0 and not sys.platform.startswith("win"):
        pytest.skip("a real NVML library is installed here; the no-driver case cannot be tested")
    return env
