"""``tune.png``: the Tune dialog with a finished table, from a real tune's ``rlpanel tune --json`` output.

    rlpanel tune --algo PPO --env CartPole-v1 --budget-s 240 --json > tune.json
    QT_QPA_PLATFORM=offscreen python resources/screenshots/make_tune_screenshot.py tune.json [OUT_DIR]

The rows are the measured ones, shown by the dialog's own slots as a live tune shows them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> int:
    source = Path(sys.argv[1])
    out_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.configure.tune_dialog import TuneDialog
    from core.config.validate import validate_config
    from core.tune.table import TuneResult, TuneRow

    data = json.loads(source.read_text(encoding="utf-8"))
    app = QApplication.instance() or QApplication([])
    rows = [TuneRow(r["settings"], r["fits"], r["steps_per_s"], r["host_bytes"], r["gpu_bytes"],
                    r.get("changes_learning", []), r.get("note", "")) for r in data["table"]]
    pick = next((i for i, r in enumerate(rows) if r.settings == data["pick"]), None)
    result = TuneResult(rows, pick, data.get("preset"), data.get("stopped", "done"))
    first = rows[0].settings
    cfg = validate_config({"algo": data.get("algo", "PPO"), "env": {"id": data.get("env", "CartPole-v1")},
                           "runtime": {"n_envs": first["runtime.n_envs"]}}).config
    dialog = TuneDialog(cfg)
    dialog.budget.setValue(int(data.get("budget_s", 120)))
    for i, row in enumerate(rows):
        dialog.row_ready.emit(i, row)
    dialog._finished(result)  # noqa: SLF001 - the slot a finished tune calls
    dialog.resize(1450, 480)
    dialog.show()
    app.processEvents()
    path = out_dir / "tune.png"
    dialog.grab().save(str(path))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
