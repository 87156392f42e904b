"""``configure-own-network-WxH.png`` (WxH: the logical screen): Configure with the ``graph-attention`` preset (the
example's graph-attention extractor, issue 30), scrolled to the Own network rows, and its fit bar once the network
is measured. Trusts the example's modules in a throw-away home. Prints the fit bar and what the layout checker
finds cut. Under Xvfb::

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_own_network_screenshot.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        from PySide6.QtWidgets import QApplication

        from core.config.trust import trust

        for module in ("examples.graph_env.env", "examples.graph_env.network"):
            trust(module)
        from app.main_window import MainWindow
        from tests.app.layout.clipping import findings
        from tests.app.layout.tour import settle

        app = QApplication.instance() or QApplication([])
        window = MainWindow(Path(tmp) / "runs", confirm_close=False, tray=False)
        window.show()
        settle(app, 2.0)
        panel = window.configure
        panel.select_preset("graph-attention")
        deadline = time.monotonic() + 180  # the measurement is a child process that imports torch
        while time.monotonic() < deadline and not (panel.model.settled() and panel.current_estimate() is not None
                                                   and "measured" in panel.fit_box.detail_label.text()):
            settle(app, 0.1)
        panel.forms_area.ensureWidgetVisible(panel.rows["policy.class"], 50, 150)
        settle(app, 1.0)
        screen = window.screen().size()
        window.grab().save(str(args.out / f"configure-own-network-{screen.width()}x{screen.height()}.png"))
        print("fit:", panel.fit_box.detail_label.text())
        print("cut:", findings(window) or "nothing")
    os._exit(0)  # the window's threads need no orderly end here


if __name__ == "__main__":
    sys.exit(main())
