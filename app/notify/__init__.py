"""Notifications in the window: ``notifier`` (the window's side, through the narrow ``NotifiedWindow``
protocol), ``tray`` (``TrayIcon``), ``settings_dialog`` (Notifications…: the push URLs of ``core.notify``) and
``watch`` (which runs just ended, from one listing to the next)."""
