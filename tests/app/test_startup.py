"""The window's start (issue 29): the first frame waits for nothing it does not show, and what it leaves for later
(the Monitor's plots, the follower, the runs listing, the other tabs, the env probe) comes by itself right after."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QLabel, QTabWidget, QWidget

from app.configure.estimator import target_choices
from app.configure.model import ConfigModel
from app.configure.panel import ConfigurePanel
from app.configure.sections import ALGO_SECTIONS, LATER_FORMS
from app.entry import window_only
from app.main import lighten_pyside_import_hook
from app.widgets.lazy_tabs import LazyTabs
from core.config import presets
from core.util.paths import user_presets_dir
from tests.app.test_app_smoke import app_env
from tests.conftest import REPO

# What the first frame must not wait for: the command parser's modules (scipy, optuna), the learning stack, the plots
# (pyqtgraph and numpy: the Monitor is built right after), the env probe (gymnasium), the estimate's modules, what only
# an action or a dialog uses (a launch, a resume, the tune, zoo and agent dialogs, the queue's state), psutil (asked
# nothing before the first frame), the GPU profiles and the own network's measurement (the target list waits for them),
# pydantic and the config schema with the algorithms' tables (the forms are built from the shipped field index; the
# schema loads with the first validation, right after the first frame), and the YAML parser (the presets as an
# earlier start read them, from their JSON cache, while no file has changed; a run's config with the runs listing).
DEFERRED = ("scipy", "optuna", "torch", "stable_baselines3", "sb3_contrib", "pandas", "matplotlib", "pyqtgraph", "numpy",
            "gymnasium", "core.cli.main", "core.results.stats", "app.results.panel", "app.sweeps.panel",
            "app.monitor.panel", "app.monitor.follower", "core.estimate.estimate", "core.estimate.device", "core.launch.start",
            "core.launch.control", "filelock", "importlib.metadata", "app.configure.tune_dialog", "app.configure.zoo_import",
            "app.agent.evaluate_dialog", "app.agent.watch_window", "core.queue.state", "app.notify.settings_dialog",
            "psutil", "core.estimate.gpus", "core.estimate.calibration", "core.estimate.measured", "pydantic", "pydantic_core",
            "annotated_types", "core.config.schema", "core.config.validate", "core.config.fields",
            "core.config.algorithms.registry", "core.config.algorithms.ppo", "core.config.spaces", "yaml",
            "core.util.yaml_reader")

# The real ``rlpanel`` entry (app.entry.main, no command): the modules loaded at the first frame, and those loaded once
# the Monitor is built and the env probed (or 20 s later), are written out.
PROBE = """
import json, sys
from pathlib import Path
from PySide6.QtCore import QTimer
import app.main_window as mw

out, built = Path(sys.argv[1]), {}
init = mw.MainWindow.__init__

def watched(self, *args, **kwargs):
    init(self, *args, **kwargs)
    def first_frame():
        built["at_first_frame"] = sorted(sys.modules)
        built["tabs_at_first_frame"] = [type(self.tabs.widget(i)).__name__ for i in range(self.tabs.count())]
        built["target_at_first_frame"] = self.configure.fit_box.target_combo.itemText(0)
        built["schema_at_first_frame"] = "core.config.schema" in sys.modules
        built["validated_at_first_frame"] = self.config.validation.config is not None
        built["forms_at_first_frame"] = sorted(self.configure.forms)
        QTimer.singleShot(100, later)
    def later(waited=[0]):
        waited[0] += 1
        came = type(self.tabs.widget(0)).__name__ == "MonitorPanel" and "gymnasium" in sys.modules
        if not came and waited[0] < 200:  # each 100 ms, at most 20 s
            QTimer.singleShot(100, later)
            return
        built["tabs_later"] = [type(self.tabs.widget(i)).__name__ for i in range(self.tabs.count())]
        built["follower"] = self._follower is not None
        built["target_later"] = self.configure.fit_box.target_combo.itemText(0)
        built["runs_listed"] = self.runs.folder_label.text()
        built["schema_later"] = sys.modules["core.config.schema"].RunConfig.__pydantic_complete__
        built["validated_later"] = self.config.validation.config is not None
        built["forms_later"] = sorted(self.configure.forms)
        built["later"] = sorted(sys.modules)
        out.write_text(json.dumps(built))
        self.close()
    self.first_frame.connect(first_frame)

mw.MainWindow.__init__ = watched
from app.entry import main
sys.exit(main([]))
"""


def test_the_first_frame_loads_none_of_what_it_defers_and_all_of_it_comes_by_itself(tmp_path, monkeypatch):
    out, shown = tmp_path / "modules.json", tmp_path / "shown"
    monkeypatch.setenv("RLPANEL_HOME", str(tmp_path))  # the child's
    presets.list_presets(checked=False)  # an earlier start read the presets: kept, as read, in RLPANEL_HOME/cache
    done = subprocess.run([sys.executable, "-c", PROBE, str(out)], cwd=REPO, env=app_env(tmp_path, RLPANEL_SHOWN_FILE=str(shown)),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(out.read_text())
    early = set(seen["at_first_frame"])
    assert not [m for m in DEFERRED if m in early]
    # the bench's times: the first frame (time, CPU), then the steps after it done (MainWindow.settled), later
    frame_at, frame_cpu, started_at, started_cpu = map(float, shown.read_text().split())
    assert frame_at <= started_at and frame_cpu <= started_cpu
    assert "app.configure.panel" in early and "core.config.field_index" in early  # Configure is in the first frame
    assert seen["tabs_at_first_frame"][0] == "QWidget"  # the Monitor's placeholder: "Starting the plots…"
    assert seen["target_at_first_frame"] == "auto: looking for a GPU\u2026"  # NVML is asked after the first frame
    # the schema (pydantic) loads and builds at the first validation, after the first frame; the forms below the fold too
    assert not seen["schema_at_first_frame"] and not seen["validated_at_first_frame"]
    assert not set(LATER_FORMS) & set(seen["forms_at_first_frame"]) and "budget" in seen["forms_at_first_frame"]
    # right after, by itself: the Monitor with its plots, the follower, the env probe; the other tabs wait to be shown
    assert seen["tabs_later"][:2] == ["MonitorPanel", "RunsPanel"] and seen["tabs_later"][2:5] == ["QWidget"] * 3
    assert seen["follower"] and {"pyqtgraph", "numpy", "gymnasium"} <= set(seen["later"])
    assert seen["schema_later"] and seen["validated_later"] and set(LATER_FORMS) <= set(seen["forms_later"])
    assert seen["target_later"].startswith("auto: ") and "looking" not in seen["target_later"]  # this machine's GPU, or none
    assert not {"scipy", "optuna", "torch", "stable_baselines3"} & set(seen["later"])  # no tab that needs them shown
    assert {"pydantic", "core.config.schema", "yaml"} <= set(seen["later"])  # the first validation's


def test_the_window_alone_skips_the_command_parser_and_anything_else_goes_to_it():
    assert window_only([]).runs_dir is None
    assert window_only(["--runs-dir", "/x/runs"]).runs_dir == "/x/runs"
    assert window_only(["--runs-dir=/x/runs"]).runs_dir == "/x/runs"
    for argv in (["runs"], ["--help"], ["--runs-dir"], ["--runs-dir", "-x"], ["--runs-dir=", "runs"], ["--json"],
                 ["--runs-dir", "/x", "runs"]):
        assert window_only(argv) is None, argv  # core.cli's parser: a command, its help, or its one-line error


def test_a_lazy_tab_is_built_when_first_shown_in_its_place_before_the_later_slots_see_it(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    lazy = LazyTabs(tabs)
    made: list[str] = []

    def factory(name: str):
        return lambda: (made.append(name), QLabel(f"the {name} page"))[1]

    lazy.add("First", factory("First"), waiting="Starting…")
    lazy.add("Plain", QLabel("built already"))
    lazy.add("Later", factory("Later"))
    seen: list[str] = []
    tabs.currentChanged.connect(lambda i: seen.append(type(tabs.widget(i)).__name__))
    tabs.show()
    assert made == [] and tabs.currentIndex() == 0  # the first tab's placeholder waits for its owner
    assert tabs.widget(0).findChild(QLabel).text() == "Starting…"
    tabs.setCurrentIndex(2)
    assert made == ["Later"] and seen == ["QLabel"] and tabs.tabText(2) == "Later" and tabs.currentIndex() == 2
    page = lazy.get("First")  # asked for: built in its place, the current tab stays
    assert made == ["Later", "First"] and tabs.widget(0) is page and tabs.tabText(0) == "First"
    assert tabs.currentIndex() == 2 and seen == ["QLabel"]  # a swap is no change of tab
    assert lazy.get("First") is page and made == ["Later", "First"]  # once
    tabs.setCurrentIndex(0)
    assert made == ["Later", "First"] and lazy.names() == ["First", "Plain", "Later"]


def test_configure_builds_the_shown_algorithms_form_and_any_other_when_asked(qtbot):
    panel = ConfigurePanel()
    qtbot.addWidget(panel)
    algo = str(panel.model.state.effective_raw()["algo"]).lower()
    assert [name for name in panel.forms if name in ALGO_SECTIONS] == [algo]  # one of the algorithms' forms
    panel.set_field("algo", "SAC")
    panel.validate_now()
    assert panel.forms["sac"].isVisibleTo(panel) and not panel.forms[algo].isVisibleTo(panel)
    assert panel.rows["sac.gamma"].text() == str(panel.model.state.effective_raw()["sac"]["gamma"])
    td3 = panel.rows["td3.gamma"]  # asked for by name: built (hidden) with the value it holds
    assert isinstance(td3, QWidget) and not panel.forms["td3"].isVisibleTo(panel) and td3.text()
    assert "td3" in panel.forms and "ddpg" not in panel.forms


def test_a_held_config_shows_its_values_at_once_and_is_validated_with_its_presets_at_its_first_flush(qtbot):
    folder = user_presets_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "wild.yaml").write_text("ppo:\n  gamma: 7\n")  # readable, but no valid config
    model = ConfigModel(hold_validation=True)  # the window's: validated right after its first frame
    panel = ConfigurePanel(model, detect_gpus=False)
    qtbot.addWidget(panel)
    model.load_edits("fast", {"ppo": {"n_epochs": 3}})  # the last session's edits, put back before the first frame
    assert panel.rows["ppo.n_epochs"].text() == "3" and panel.presets_box.selected() == "fast"
    assert model.validation.config is None and not model.settled() and "wild" not in panel.presets_box.broken()
    config = model.current_config()  # a reader flushes: validated now, the presets with it
    assert config is not None and config.ppo.n_epochs == 3
    assert "gamma" in panel.presets_box.broken()["wild"] and panel.presets_box.selected() == "fast"


def test_the_forms_below_the_fold_are_built_later_or_when_asked_for_and_show_what_forms_built_at_once_show(qtbot):
    edits = {"runtime": {"device": "tpu"}, "policy": {"net_arch": [32, 32]}, "budget": {"keep_checkpoints": 2}}
    at_once = ConfigurePanel()
    later = ConfigurePanel(ConfigModel(hold_validation=True), later_forms=True)
    for panel in (at_once, later):
        qtbot.addWidget(panel)
        panel.model.load_edits(None, edits)
    assert not set(LATER_FORMS) & set(later.forms) and later.threads_hint is None
    device = later.rows["runtime.device"]  # asked for by its path: its form is built, the others wait
    assert "runtime" in later.forms and "policy" not in later.forms and later.threads_hint is not None
    later.model.flush()  # the first validation: the issue shows on the row built before it
    later.build_later_forms()
    assert set(LATER_FORMS) <= set(later.forms) and device is later.rows["runtime.device"]
    assert later.rows["budget.keep_checkpoints"] is later.forms["budget_more"].rows["budget.keep_checkpoints"]
    assert set(at_once.rows) == set(later.rows)
    for path, row in at_once.rows.items():
        assert (later.rows[path].text(), later.rows[path].error()) == (row.text(), row.error()), path
    assert device.error() and "tpu" in device.error()


def test_pyside6s_import_hook_gives_the_same_answers_from_the_files_bytes(monkeypatch):
    feature = sys.modules["shibokensupport.feature"]  # loaded with PySide6 (this module imports QtWidgets)
    original = feature._mod_uses_pyside
    monkeypatch.setattr(feature, "_mod_uses_pyside", original)  # put back after the test
    assert lighten_pyside_import_hook() and not lighten_pyside_import_hook()  # once
    lighter = feature._mod_uses_pyside
    assert lighter is not original
    modules = list(sys.modules.values())
    answers = [(getattr(m, "__name__", "?"), lighter(m)) for m in modules]
    assert answers == [(getattr(m, "__name__", "?"), original(m)) for m in modules]
    assert dict(answers)["app.configure.panel"] and not dict(answers)["core.config.schema"]  # both answers occur
    assert not lighter(sys) and not lighter(sys.modules["pydantic_core._pydantic_core"])  # no .py file: PySide6's own


def test_the_target_list_waits_for_its_profiles_without_calling_a_saved_target_unknown(qtbot):
    model = ConfigModel(hold_validation=True)
    panel = ConfigurePanel(model, detect_gpus=False)
    qtbot.addWidget(panel)
    model.load_edits(None, {"target_gpu": "RTX 4070"})  # the last session's target, put back before the first frame
    combo = panel.fit_box.target_combo
    assert combo.itemText(0) == "auto: looking for a GPU\u2026" and combo.currentText() == "RTX 4070"
    panel.show_targets(target_choices(detect=False))  # the window's, after its first frame
    assert combo.currentText() == "RTX 4070 (12 GiB)" and combo.count() > 2 and panel.fit_box.target() == "RTX 4070"
    panel.fit_box.select_target("no such card")  # a name the profiles do not know says so once they are there
    assert combo.currentText() == "no such card (unknown profile)"


def counted_reads(monkeypatch) -> tuple[list[str], Path]:
    """The names of the preset files read from now on, and the user's presets folder (made)."""
    reads: list[str] = []
    read = presets._read
    monkeypatch.setattr(presets, "_read", lambda path, builtin: (reads.append(path.stem), read(path, builtin))[1])
    folder = user_presets_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return reads, folder


def test_the_presets_are_read_once_until_a_file_changes_and_a_validated_list_is_kept_beside_the_read_one(monkeypatch):
    reads, folder = counted_reads(monkeypatch)
    mine = folder / "mine.yaml"
    mine.write_text("description: one\nppo:\n  n_epochs: 3\n")
    first = presets.list_presets(checked=False)
    count = len(reads)
    assert count == len(first) and "mine" in reads
    again = presets.list_presets(checked=False)
    assert len(reads) == count and [p.name for p in again] == [p.name for p in first]  # not read again
    again[-1].data["description"] = "changed by a caller"  # a copy: the cached list keeps what the file says
    assert presets.get_preset("mine", checked=False).description == "one" and len(reads) == count
    checked = presets.list_presets()  # validated: read and kept on its own, the read-only list stays
    assert len(reads) == 2 * count and not {p.name: p for p in checked}["mine"].error
    presets.list_presets(checked=False)
    assert len(reads) == 2 * count
    mine.write_text("description: two, a little longer\nppo:\n  n_epochs: 4\n")  # another size: the stamp changes
    assert presets.get_preset("mine", checked=False).description == "two, a little longer"
    assert len(reads) == 3 * count


def test_what_is_typed_before_the_first_validation_is_validated_with_it_and_kept(qtbot):
    model = ConfigModel(hold_validation=True)  # the window's: the forms are up before pydantic is asked anything
    panel = ConfigurePanel(model, detect_gpus=False, later_forms=True)
    qtbot.addWidget(panel)
    panel.rows["ppo.n_epochs"].set_text("7")  # typed into the first frame's forms
    panel.rows["runtime.n_envs"].set_text("0")  # a form below the fold, asked for by its path: built, and typed into
    assert model.validation.config is None and model.state.overrides == {"ppo": {"n_epochs": 7}, "runtime": {"n_envs": 0}}
    model.flush()  # the window's first step after its first frame
    panel.build_later_forms()
    assert [issue.path for issue in model.errors()] == ["runtime.n_envs"] and panel.rows["runtime.n_envs"].error()
    panel.rows["runtime.n_envs"].set_text("2")
    config = model.current_config()
    assert config is not None and (config.ppo.n_epochs, config.runtime.n_envs) == (7, 2)
    assert panel.rows["ppo.n_epochs"].text() == "7" and panel.rows["runtime.n_envs"].text() == "2"


def test_the_presets_as_read_come_back_from_their_cache_until_a_file_changes_and_only_what_json_holds_exactly(monkeypatch):
    reads, folder = counted_reads(monkeypatch)
    (folder / "mine.yaml").write_text("description: one\nbase: fast\nppo:\n  n_epochs: 3\n")
    (folder / "broken.yaml").write_text("ppo: [1, 2\n")
    first = presets.list_presets(checked=False)
    count = len(reads)
    presets._cache.clear()  # a later start: nothing in memory
    again = presets.list_presets(checked=False)
    assert len(reads) == count  # from RLPANEL_HOME/cache/presets-read.json, no file parsed
    assert [(p.name, p.path, p.builtin, p.data, p.error) for p in again] == \
        [(p.name, p.path, p.builtin, p.data, p.error) for p in first]
    assert presets.resolve_raw("mine", {}, checked=False)["ppo"]["n_epochs"] == 3
    (folder / "mine.yaml").write_text("description: two\nppo:\n  n_epochs: 4\n")  # a file changed: all are read
    presets._cache.clear()
    assert presets.get_preset("mine", checked=False).description == "two" and len(reads) == 2 * count
    (folder / "dated.yaml").write_text("description: 2026-11-27\n")  # a date: JSON would give it back as text
    presets._cache.clear()
    dated = presets.get_preset("dated", checked=False).data["description"]
    presets._cache.clear()
    assert presets.get_preset("dated", checked=False).data["description"] == dated and not isinstance(dated, str)
    assert len(reads) == 2 * count + 2 * (count + 1)  # all ten files read at each start: never cached
