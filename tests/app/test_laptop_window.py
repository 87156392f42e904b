"""The window on a laptop screen: it fits, Launch and the budget stay in view, the wheel scrolls
the form without changing values, and Configure edits survive closing the window."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QComboBox

from app.configure.panel import FOLD_PRESETS_BELOW
from tests.app.configure.helpers import TIMEOUT_MS, wait_settled
from tests.conftest import REPO

FRAME = 32  # the title bar; fit_screen leaves room for it


SCRIPT = r"""
import json, sys, time
from pathlib import Path
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
from app.configure.sections import ALGO_SECTIONS
window = MainWindow(Path(sys.argv[1]), confirm_close=False)
window.show()
panel = window.configure
deadline = time.monotonic() + 120
while not panel.model.settled() and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.02)
for _ in range(20):
    app.processEvents()

def inside(widget):
    if not widget.isVisibleTo(window):
        return False
    top_left = widget.mapTo(window, QPoint(0, 0))
    far = top_left + QPoint(widget.width() - 1, widget.height() - 1)
    return window.rect().contains(top_left) and window.rect().contains(far)

viewport = panel.forms_area.viewport()
algo = panel.current_config().algo.lower()
rows = 0
for row in panel.forms[algo].rows.values():
    top = row.editor.mapTo(viewport, QPoint(0, 0)).y()
    rows += row.editor.isVisibleTo(panel) and top >= 0 and top + row.editor.height() <= viewport.height()
avail = window.screen().availableGeometry()
print(json.dumps({"avail": [avail.width(), avail.height()], "size": [window.width(), window.height()],
                  "compact": panel.compact, "launch": inside(panel.launch_button), "fit_bar": inside(panel.fit_box),
                  "budget": [inside(panel.rows[p].editor) for p in ("budget.total_timesteps", "budget.checkpoint_every",
                                                                   "budget.eval_every")],
                  "rows": int(rows), "algo_known": algo in ALGO_SECTIONS}), flush=True)
import os
os._exit(0)  # the measurements are out; the window's threads need no orderly end here
"""


# a 1366x768 laptop at 100 %, and a 15.6" 1920x1080 laptop at Windows' default 150 % (1280x720 logical)
LAPTOPS = [(1366, 768, "1"), (1920, 1080, "1.5")]


@pytest.mark.parametrize("width, height, scale", LAPTOPS)
def test_launch_budget_fit_bar_and_six_rows_fit_a_laptop_screen(tmp_path, runs_dir, width, height, scale):
    screen = tmp_path / "screen.json"
    screen.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": width, "height": height,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen}", "QT_SCALE_FACTOR": scale}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(runs_dir)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["avail"] == [round(width / float(scale)), round(height / float(scale))]
    # first start: as large as the screen allows, never larger (room left for the title bar)
    assert data["size"][0] <= data["avail"][0] and data["size"][1] + FRAME <= data["avail"][1]
    assert data["compact"] is True
    assert data["launch"] and data["fit_bar"] and data["budget"] == [True, True, True]
    assert data["algo_known"] and data["rows"] >= 6


def test_the_wheel_scrolls_the_form_and_never_changes_an_unfocused_combo(qtbot, make_window):
    window = make_window()
    window.resize(1366, 728)
    window.configure.set_compact(True)
    panel = window.configure
    wait_settled(qtbot, panel)
    combo = next(row.editor for path, row in panel.rows.items() if isinstance(row.editor, QComboBox)
                 and row.editor.isVisibleTo(panel) and path.startswith("policy."))
    before, bar = combo.currentText(), panel.forms_area.verticalScrollBar()
    bar.setValue(0)
    start = bar.value()
    window.activateWindow()
    panel.launch_button.setFocus()
    assert not combo.hasFocus()
    for _ in range(3):
        event = QWheelEvent(QPointF(5, 5), QPointF(combo.mapToGlobal(QPoint(5, 5))), QPoint(0, 0), QPoint(0, -120),
                            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(combo, event)
    assert combo.currentText() == before  # the value stayed
    assert bar.value() > start  # the form scrolled instead
    combo.setFocus()  # a focused combo takes the wheel as usual
    qtbot.waitUntil(combo.hasFocus, timeout=TIMEOUT_MS)
    event = QWheelEvent(QPointF(5, 5), QPointF(combo.mapToGlobal(QPoint(5, 5))), QPoint(0, 0), QPoint(0, -120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(combo, event)
    assert combo.currentText() != before or combo.count() == 1


def test_configure_edits_survive_closing_and_reopening(qtbot, make_window):
    window = make_window()
    panel = window.configure
    panel.select_preset("fast")
    panel.model.set_field("budget.total_timesteps", 12345)
    panel.model.set_field("ppo.n_epochs", 3)
    wait_settled(qtbot, panel)
    window.close()
    again = make_window()
    wait_settled(qtbot, again.configure)
    assert again.configure.model.preset == "fast"
    cfg = again.configure.current_config()
    assert cfg.budget.total_timesteps == 12345 and cfg.ppo.n_epochs == 3
    assert again.configure.rows["budget.total_timesteps"].text() == "12345"


def test_a_window_made_short_folds_the_preset_list_so_the_forms_keep_their_rows(qtbot, make_window):
    window = make_window()
    window.configure.set_compact(False)  # a big screen: the list is shown beside nothing
    panel = window.configure
    window.resize(1300, 1000)
    qtbot.waitUntil(lambda: panel.height() >= FOLD_PRESETS_BELOW, timeout=TIMEOUT_MS)
    assert panel.presets_box.isVisible()
    window.resize(1300, 700)  # made short on that screen: the list folds to its one line
    qtbot.waitUntil(lambda: not panel.presets_box.isVisible(), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: panel.forms_area.height() > 150, timeout=TIMEOUT_MS)  # the forms got the list's room
    window.resize(1300, 1000)
    qtbot.waitUntil(panel.presets_box.isVisible, timeout=TIMEOUT_MS)
    panel.presets_toggle.click()  # the user folds it: a fold the user chose is kept, whatever the height
    window.resize(1300, 1010)
    qtbot.wait(100)
    assert not panel.presets_box.isVisible()


RESIZE_SCRIPT = r"""
import json, os, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
window = MainWindow(Path(sys.argv[1]), confirm_close=False)
window.show()
app.processEvents()
opened = [window.width(), window.height()]
window.resize(int(sys.argv[2]), int(sys.argv[3]))
app.processEvents()
window.close()
print(json.dumps({"opened": opened}), flush=True)
os._exit(0)
"""


def open_on_screen(tmp_path, runs_dir, screen: tuple[int, int], resize_to: tuple[int, int]) -> list[int]:
    """Open the window on a screen of this size, resize it and close it: the size it opened at."""
    return run_on_screen(tmp_path, screen, RESIZE_SCRIPT, str(runs_dir), *map(str, resize_to))["opened"]


def run_on_screen(tmp_path, screen: tuple[int, int], script: str, *args: str) -> dict:
    """Run ``script`` on an offscreen screen of this size (settings in the test's RLPANEL_HOME): its last line's JSON."""
    config = tmp_path / f"screen-{screen[0]}x{screen[1]}.json"
    config.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1],
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    # HOME and XDG_CONFIG_HOME elsewhere too: a settings write that missed RLPANEL_HOME would land there
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_window_size_is_kept_per_screen_in_rlpanel_home(tmp_path, runs_dir, user_home):
    from app.settings import qsettings

    assert Path(qsettings().fileName()) == user_home / "rlpanel.ini"  # every test's window: its own RLPANEL_HOME
    desktop, smaller = (1920, 1200), (1600, 900)
    assert open_on_screen(tmp_path, runs_dir, desktop, (1400, 820)) == [1500, 920]  # first start: the default
    # a size saved on the desktop is not restored on the smaller screen, though it would fit: that screen's default
    assert open_on_screen(tmp_path, runs_dir, smaller, (1450, 850)) == [1500, 900 - FRAME]
    assert open_on_screen(tmp_path, runs_dir, desktop, (1500, 920)) == [1400, 820]  # each screen its own
    assert open_on_screen(tmp_path, runs_dir, smaller, (1450, 850)) == [1450, 850]
    ini = (user_home / "rlpanel.ini").read_text()
    assert "1920x1200" in ini and "1600x900" in ini
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home" / ".config").exists()  # never the system's folder


SPLITTER_SCRIPT = r"""
import json, os, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
window = MainWindow(Path(sys.argv[1]), confirm_close=False)
window.show()
monitor = window.monitor  # built now, as after the first frame; its tab is the one shown
import time
deadline = time.monotonic() + 60
# fit_shown runs from the event loop after the first show; the steps after the first frame find no GPU here, and the
# GPU plots fold to a line: read the sizes once the window has settled (10 turns of the loop read them before the
# fold on one start and after it on the next)
while not window.started() and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
deadline = time.monotonic() + 5  # NVML's answer comes off the GUI thread: no GPU on a test machine, so the plots fold
while not monitor.system.is_folded() and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
for _ in range(10):
    app.processEvents()
opened = {"window": window.splitter.sizes(), "monitor": monitor.splitter.sizes()}
if sys.argv[2] == "drag":  # the user drags: Configure as narrow as it goes, the reward plot 40 pixels taller
    window.splitter.setSizes([0, sum(window.splitter.sizes())])
    reward, charts, gpus = monitor.splitter.sizes()
    monitor.splitter.setSizes([reward + 40, charts - 40, gpus])
    app.processEvents()
dragged = {"window": window.splitter.sizes(), "monitor": monitor.splitter.sizes()}
window.close()
print(json.dumps({"opened": opened, "closed": dragged}), flush=True)
os._exit(0)
"""


def test_the_splitters_are_kept_per_screen_and_another_screen_never_inherits_them(tmp_path, runs_dir, user_home):
    """Issue 42: closed at 1280x720, then at 1366x768, then at 1280x720 again, Configure came back wider and the
    GPU panels' messages cut: the splitters saved on one screen were put back on the other."""
    laptop, wider = (1280, 720), (1366, 768)
    first = run_on_screen(tmp_path, laptop, SPLITTER_SCRIPT, str(runs_dir), "drag")
    assert first["closed"] != first["opened"]  # the drag moved both splitters
    other = run_on_screen(tmp_path, wider, SPLITTER_SCRIPT, str(runs_dir), "keep")
    # the wider screen lays itself out: Configure at its fitted width, wider than the narrowest the laptop saved
    assert other["opened"]["window"][0] > first["closed"]["window"][0]
    assert other["opened"]["monitor"] != first["closed"]["monitor"]
    back = run_on_screen(tmp_path, laptop, SPLITTER_SCRIPT, str(runs_dir), "keep")
    # the laptop's own splitters, not the wider screen's (the tabs take what the restored window's width leaves)
    assert back["opened"]["window"][0] == first["closed"]["window"][0]
    assert back["opened"]["monitor"] == first["closed"]["monitor"]
    again = run_on_screen(tmp_path, wider, SPLITTER_SCRIPT, str(runs_dir), "keep")
    assert again["opened"]["window"][0] == other["closed"]["window"][0]
    assert again["opened"]["monitor"] == other["closed"]["monitor"]


def test_configure_folds_away_while_results_is_shown_on_a_laptop_and_comes_back(qtbot, make_window):
    window = make_window()
    window.resize(1280, 688)
    window.configure.set_compact(True)
    wait_settled(qtbot, window.configure)
    fold, tabs = window.configure_fold, window.lazy_tabs.names()
    window.tabs.setCurrentIndex(tabs.index("Runs"))  # the Runs table's numbers fit beside Configure
    assert window.configure.isVisible() and not fold.button.isVisible()
    window.tabs.setCurrentIndex(tabs.index("Results"))
    assert not window.configure.isVisible() and fold.button.isVisible()
    qtbot.waitUntil(lambda: window.tabs.width() > 1200, timeout=TIMEOUT_MS)  # the window's width, not ~680 px
    qtbot.mouseClick(fold.button, Qt.MouseButton.LeftButton)  # shown again for this visit
    assert window.configure.isVisible() and not fold.button.isVisible()
    window.tabs.setCurrentIndex(tabs.index("Monitor"))
    assert window.configure.isVisible()
    window.tabs.setCurrentIndex(tabs.index("Results"))  # a new visit: folded again
    assert not window.configure.isVisible()

    edit = window.configure.seeds_edit  # a launch Configure refuses (0 seeds) shows Configure, where it says why
    edit.selectAll()
    qtbot.keyClicks(edit, "0")
    window.run_actions.launch_action.trigger()
    assert window.configure.isVisible() and window.configure.seeds_error.isVisibleTo(window.configure)

    window.tabs.setCurrentIndex(tabs.index("Monitor"))
    window.configure.set_compact(False)  # a desktop screen: Configure stays beside every tab
    window.tabs.setCurrentIndex(tabs.index("Results"))
    assert window.configure.isVisible() and not fold.button.isVisible()


FOLD_SCRIPT = r"""
import json, os, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
window = MainWindow(Path(sys.argv[1]), confirm_close=False)
window.show()
for _ in range(20):  # fit_shown and the restored tab come from the event loop after the first show
    app.processEvents()
names = window.lazy_tabs.names()
opened = {"tab": window.lazy_tabs.current_name(), "configure": window.configure.width(),
          "folded": window.configure.isHidden()}
window.tabs.setCurrentIndex(names.index(sys.argv[2]))
for _ in range(10):
    app.processEvents()
shown = {"tab": sys.argv[2], "configure": window.configure.width(), "folded": window.configure.isHidden()}
window.close()
print(json.dumps({"opened": opened, "shown": shown}), flush=True)
os._exit(0)
"""


def test_a_window_closed_with_configure_folded_brings_it_back_at_its_width(tmp_path, runs_dir, user_home):
    """The Results tab folds Configure on a laptop screen; closed there, the splitter saved for the screen must not
    bring Configure back collapsed on the next start's other tabs."""
    laptop = (1280, 720)
    first = run_on_screen(tmp_path, laptop, FOLD_SCRIPT, str(runs_dir), "Monitor")
    width = first["shown"]["configure"]
    assert width > 250 and not first["shown"]["folded"]
    folded = run_on_screen(tmp_path, laptop, FOLD_SCRIPT, str(runs_dir), "Results")
    assert folded["shown"]["folded"]  # closed with Results shown: Configure folded away
    again = run_on_screen(tmp_path, laptop, FOLD_SCRIPT, str(runs_dir), "Monitor")
    assert again["opened"]["tab"] == "Results" and again["opened"]["folded"]  # the tab comes back, folded
    assert not again["shown"]["folded"] and abs(again["shown"]["configure"] - width) <= 2, again
