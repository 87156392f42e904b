"""The "Ray cluster" field of the Queue and Sweeps tabs: where the plans and sweeps the window starts run.

Empty: this machine. An address (the head's dashboard, ``http://HEAD:8265``) sends every run to
that cluster through Ray's job API, as ``--ray`` does; the nodes' python and the runs folder as
the nodes see it are optional (``--ray-python``, ``--ray-runs``). Kept in the app's settings and
shared by both tabs (each reads them again when shown).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from app.settings import get_setting, set_setting
from core.cluster.client import RAY_MISSING, ray_installed, require_ray
from core.cluster.target import ClusterTarget

ADDRESS_SETTING = "cluster/address"
PYTHON_SETTING = "cluster/python"
RUNS_SETTING = "cluster/runs"


class ClusterField(QWidget):
    """Address, nodes' python and nodes' runs folder; ``target()`` is what ``start_queue``/``start_sweep`` take."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.address = QLineEdit()
        self.address.setPlaceholderText("this machine")
        # optional: without the ray extra the field says so before a run is sent anywhere
        missing = "" if ray_installed() else f" Optional, and not installed: {RAY_MISSING}."
        self.address.setToolTip("A Ray cluster's dashboard (http://HEAD:8265): every run goes there as a Ray job; "
                                "empty: runs start on this machine. Check it first with: rlpanel doctor --ray ADDRESS" + missing)
        self.python = QLineEdit()
        self.python.setPlaceholderText("python")
        self.python.setToolTip("The python on the nodes that has rlpanel installed (their PATH's python if empty)")
        self.runs = QLineEdit()
        self.runs.setPlaceholderText("same path")
        self.runs.setToolTip("The runs folder as the nodes mount it (e.g. /mnt/runs for Z:\\runs here); empty: the same path")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, edit, stretch in (("Ray cluster", self.address, 3), ("nodes' python", self.python, 2),
                                     ("nodes' runs folder", self.runs, 2)):
            layout.addWidget(QLabel(label))
            layout.addWidget(edit, stretch)
            edit.editingFinished.connect(self.save)
        self.load()

    def load(self) -> None:
        self.address.setText(get_setting(ADDRESS_SETTING, ""))
        self.python.setText(get_setting(PYTHON_SETTING, ""))
        self.runs.setText(get_setting(RUNS_SETTING, ""))

    def save(self) -> None:
        set_setting(ADDRESS_SETTING, self.address.text().strip())
        set_setting(PYTHON_SETTING, self.python.text().strip())
        set_setting(RUNS_SETTING, self.runs.text().strip())

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        self.load()  # the other tab may have changed it
        super().showEvent(event)

    def target(self) -> dict[str, Any] | None:
        """The cluster to send runs to (None: this machine); ``ClusterError`` names a bad field or a missing extra."""
        self.save()
        address = self.address.text().strip()
        if not address:
            return None
        target = ClusterTarget.make(address, self.python.text().strip() or None, self.runs.text().strip() or None)
        require_ray()
        return target.to_json()
