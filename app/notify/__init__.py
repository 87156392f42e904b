"""Notifications in the window: the tray icon and its desktop notifications, the settings dialog
for the push URLs (core/notify), and the watcher that tells which runs just ended."""
