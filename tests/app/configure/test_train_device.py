"""The fit bar and Launch tell the truth when NVML sees a GPU that this (CPU) torch cannot use.

The window runs in a child process with the fake NVML driver on its library path (NVML is off in
the test process itself); the torch it asks is the test venv's real CPU build.
"""

from __future__ import annotations

import json

PANEL = r"""
import json, sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.configure.panel import ConfigurePanel
panel = ConfigurePanel()
panel.resize(520, 1000)
panel.show()
panel.select_preset("fast")
deadline = __import__("time").monotonic() + 200
while not panel.model.settled() and __import__("time").monotonic() < deadline:
    app.processEvents()
    __import__("time").sleep(0.02)
panel.validate_now()
box = panel.fit_box
asked = []
panel.confirm_warnings = lambda e: asked.append(e.train_device) or False
launched = panel.request_launch()
out = {"settled": panel.model.settled(), "gpu_text": box.gpu_text.text(), "detail": box.detail_label.text(),
       "warning": box.warning_label.text(), "warning_shown": not box.warning_label.isHidden(),
       "asked": asked, "launched": launched}
panel.model.set_field("runtime.device", "cuda")
panel.validate_now()
out.update(cuda_errors=[str(i) for i in panel.model.errors()], cuda_config=panel.current_config() is not None)
print(json.dumps(out))
"""


def test_fit_bar_and_launch_say_cpu_when_torch_has_no_cuda(fake_nvml):
    fake_nvml.configure(count=1, name="NVIDIA GeForce RTX 4060 Laptop GPU", memory_total=8 * 2**30, cc_major=8, cc_minor=9)
    done = fake_nvml.run_python(PANEL, timeout=280)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["settled"]
    assert data["gpu_text"] == "not used (CPU)" and data["detail"].startswith("trains on cpu")
    assert data["warning_shown"] and "trains on the CPU: this torch build" in data["warning"] and "has no CUDA" in data["warning"]
    assert data["asked"] == ["cpu"] and data["launched"] is False  # Launch asked first; the user said no
    # runtime.device: cuda on this torch is an error on the field, with the fix: no config to launch
    assert data["cuda_config"] is False
    assert any(e.startswith("runtime.device: cuda was asked for but this torch build") for e in data["cuda_errors"])
