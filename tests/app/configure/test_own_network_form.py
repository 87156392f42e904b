"""Issue 30 in the window: the policy form's own network (Browse... picks a file and a class, read not run; the kwargs
field refuses a non-mapping at the field) and the fit bar's "measured from your network"."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QFileDialog, QInputDialog

from core.config.trust import trust
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, type_into, wait_settled

NETS = '''
raise RuntimeError("read, never imported by the form")

class Helper:
    pass

class Attention:
    pass
'''


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def test_browse_picks_a_class_without_running_the_file(qtbot, panel, tmp_path, monkeypatch):
    (tmp_path / "my_nets.py").write_text(NETS)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(tmp_path / "my_nets.py"), ""))
    offered: list[list[str]] = []
    monkeypatch.setattr(QInputDialog, "getItem", lambda parent, title, label, items, *a: (offered.append(list(items)),
                                                                                           ("Attention", True))[1])
    [extractor_browse, _] = panel.browse_buttons
    extractor_browse.click()
    wait_settled(qtbot, panel)
    assert offered == [["Helper", "Attention"]]
    cfg = panel.current_config()
    assert cfg is not None and cfg.policy.features_extractor == "my_nets:Attention"
    assert cfg.env.path == str(tmp_path)  # outside the launch folder: its folder is where the run imports it from
    assert panel.rows["policy.features_extractor"].editor.text() == "my_nets:Attention"

    type_into(qtbot, panel, "policy.features_extractor_kwargs", "[4, 64]")
    wait_settled(qtbot, panel)
    assert "must be a mapping" in (panel.rows["policy.features_extractor_kwargs"].error() or "")


def test_fit_bar_says_measured_from_your_network(qtbot, panel):
    trust("examples.graph_env.env")
    trust("examples.graph_env.network")
    panel.select_preset("graph-attention")
    # two child processes (the env's spaces, then the network's measurement) on a busy machine: more time than a form
    qtbot.waitUntil(panel.model.settled, timeout=3 * TIMEOUT_MS)
    wait_settled(qtbot, panel)
    qtbot.waitUntil(lambda: panel.current_estimate() is not None, timeout=TIMEOUT_MS)
    estimate = panel.current_estimate()
    assert estimate.network_source == "measured from your network"
    assert "measured from your network" in panel.fit_box.detail_label.text()
    assert f"{estimate.parameter_count:,} parameters" in panel.fit_box.detail_label.text()
    # the narrow form column shows the start of module:Class; its tip holds the whole value, then the field's help
    tip = panel.rows["policy.features_extractor"].editor.toolTip()
    assert tip.startswith("examples.graph_env.network:GraphAttention\n\n") and panel.rows["policy.features_extractor"].help in tip
