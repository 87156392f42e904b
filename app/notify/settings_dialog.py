"""Settings > Notifications: the push URLs of ``RLPANEL_HOME/notify.yaml`` (shown masked), which
events each receives, "Send test", and whether the tray icon stays when the window closes.

The URLs are sent by the runs themselves (their supervisor, the queue runner), so they reach the
user with this window closed too. A notify.yaml that cannot be read is named here with its field
and is never overwritten: the dialog then edits nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.settings import get_setting, set_setting
from app.theme import error_color
from app.threads.background import run_in_background
from core.notify.events import EVENT_TITLES, EVENTS
from core.notify.run_events import send_test
from core.notify.send import SendResult, apprise_accepts
from core.notify.settings import (
    NotifySettings,
    NotifySettingsError,
    Target,
    check_url,
    load_settings,
    save_settings,
    settings_path,
)

KEEP_TRAY_KEY = "tray/keep_on_close"


class NotifySettingsDialog(QDialog):
    tested = Signal(list)  # the SendResults of "Send test" (masked URLs)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Notifications")
        self.targets: list[Target] = []
        self.problem: str | None = None
        try:
            settings = load_settings()
        except NotifySettingsError as exc:
            settings, self.problem = NotifySettings(), str(exc)
        self.targets = list(settings.targets)
        intro = QLabel(f"Push notifications through apprise (ntfy, Telegram, Discord, Slack, e-mail...): one URL each. "
                       f"The runs send them themselves, with this window closed too. Kept in {settings_path()} "
                       "(private to you: the URLs hold secrets and are shown masked).")
        intro.setWordWrap(True)
        self.error_label = QLabel(self.problem or "")
        self.error_label.setWordWrap(True)
        self.error_label.setVisible(bool(self.problem))
        pal = self.error_label.palette()
        pal.setColor(self.error_label.foregroundRole(), error_color(self))
        self.error_label.setPalette(pal)
        defaults = self._build_defaults(settings.events)
        self._build_urls()
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.keep_tray = QCheckBox("Keep the tray icon when the window closes (desktop notifications go on)")
        self.keep_tray.setChecked(get_setting(KEEP_TRAY_KEY, False))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        add_row = QHBoxLayout()
        add_row.addWidget(self.url_edit, 1)
        add_row.addWidget(self.add_button)
        actions = QHBoxLayout()
        actions.addWidget(self.remove_button)
        actions.addWidget(self.test_button)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        for item in (intro, self.error_label, defaults):
            layout.addWidget(item)
        layout.addWidget(self.table, 1)
        layout.addLayout(add_row)
        layout.addLayout(actions)
        layout.addWidget(self.message)
        layout.addWidget(self.keep_tray)
        layout.addWidget(self.buttons)
        self._shown_defaults: tuple[str, ...] = ()
        self._fill()
        for widget in (defaults, self.table, self.url_edit, self.add_button, self.remove_button, self.test_button):
            widget.setEnabled(self.problem is None)
        self.resize(900, 460)

    def _build_defaults(self, events: Sequence[str]) -> QGroupBox:
        """The events every URL gets unless its row says otherwise: a box each, ``events`` ticked."""
        self.default_boxes = {e: QCheckBox(EVENT_TITLES[e]) for e in EVENTS}
        defaults = QGroupBox("Events sent to every URL (unless the URL's row says otherwise)")
        grid = QGridLayout(defaults)
        for i, (event, box) in enumerate(self.default_boxes.items()):
            box.setChecked(event in events)
            box.toggled.connect(self._defaults_changed)
            grid.addWidget(box, i // 4, i % 4)
        return defaults

    def _build_urls(self) -> None:
        """The URLs' table (a column per event), the URL field, Add, Remove and Send test."""
        self.table = QTableWidget(0, 1 + len(EVENTS))
        self.table.setHorizontalHeaderLabels(["URL", *(EVENT_TITLES[e] for e in EVENTS)])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("apprise URL, e.g. ntfys://ntfy.sh/TOPIC or tgram://BOT_TOKEN/CHAT_ID")
        self.url_edit.returnPressed.connect(self.add_url)
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self.add_url)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        self.test_button = QPushButton("Send test")
        self.test_button.setToolTip("Send a test notification to the selected URL (to every URL when none is selected)")
        self.test_button.clicked.connect(self.send_test)

    # --- the table -------------------------------------------------------------------------

    def default_events(self) -> tuple[str, ...]:
        return tuple(e for e, box in self.default_boxes.items() if box.isChecked())

    def _fill(self) -> None:
        self._shown_defaults = self.default_events()  # rows showing these follow the defaults
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.targets))
        for row, target in enumerate(self.targets):
            item = QTableWidgetItem(target.masked)
            item.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
            item.setToolTip("shown masked: the URL's secrets stay in notify.yaml")
            self.table.setItem(row, 0, item)
            events = target.events if target.events is not None else self.default_events()
            for col, event in enumerate(EVENTS, 1):
                box = QTableWidgetItem()
                box.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                box.setCheckState(Qt.CheckState.Checked if event in events else Qt.CheckState.Unchecked)
                self.table.setItem(row, col, box)
        self.table.blockSignals(False)

    def _defaults_changed(self) -> None:
        """Rows that follow the defaults follow them on screen too."""
        self.targets = self.current_targets()
        self._fill()

    def row_events(self, row: int) -> tuple[str, ...]:
        return tuple(e for col, e in enumerate(EVENTS, 1)
                     if (item := self.table.item(row, col)) is not None and item.checkState() == Qt.CheckState.Checked)

    def current_targets(self) -> list[Target]:
        """The URLs with their events as the table shows them (None where they are the defaults)."""
        defaults = self._shown_defaults
        out = []
        for row, target in enumerate(self.targets):
            events = self.row_events(row) if row < self.table.rowCount() else target.events
            out.append(Target(target.url, None if events is None or events == defaults else events))
        return out

    def add_url(self) -> None:
        text = self.url_edit.text().strip()
        try:
            url = check_url(text, "URL")
        except NotifySettingsError as exc:
            self.say(str(exc), error=True)
            return
        if not apprise_accepts(url):
            self.say(f"apprise does not know {Target(url).masked}: check its scheme and shape (the apprise wiki "
                     "lists every service's URL)", error=True)
            return
        self.targets = [t for t in self.current_targets() if t.url != url] + [Target(url)]
        self.url_edit.clear()
        self._fill()
        self.say(f"added {Target(url).masked}; Save keeps it")

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True)
        targets = self.current_targets()
        for row in rows:
            removed = targets.pop(row)
            self.say(f"removed {removed.masked}; Save keeps the change")
        self.targets = targets
        self._fill()

    # --- test and save ---------------------------------------------------------------------

    def send_test(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        urls = [self.targets[r].url for r in rows] or [t.url for t in self.targets]
        if not urls:
            self.say("no URL to test: add one first", error=True)
            return
        self.test_button.setEnabled(False)
        self.say(f"sending a test to {len(urls)} URL{'s' if len(urls) != 1 else ''}...")
        run_in_background(lambda: send_test(urls, log=lambda _line: None), self._tested, self._test_failed)

    def _test_failed(self, message: str) -> None:
        self._tested([])
        self.say(f"the test could not be sent: {message}", error=True)

    def _tested(self, results: list[SendResult]) -> None:
        self.test_button.setEnabled(self.problem is None)
        if results:
            failed = [r for r in results if not r.ok]
            lines = [f"{'sent' if r.ok else 'FAILED'}: {r.url}" + (f" ({r.error})" if r.error else "") for r in results]
            self.say("\n".join(lines), error=bool(failed))
        self.tested.emit(results)

    def say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        pal = self.message.palette()
        pal.setColor(self.message.foregroundRole(), error_color(self) if error else self.palette().color(
            self.palette().ColorRole.WindowText))
        self.message.setPalette(pal)

    def save(self) -> None:
        set_setting(KEEP_TRAY_KEY, self.keep_tray.isChecked())
        if self.problem is None:
            try:
                save_settings(NotifySettings(tuple(self.current_targets()), self.default_events()))
            except OSError as exc:
                self.say(f"could not save {settings_path()}: {exc.strerror or exc}", error=True)
                return
        self.accept()
