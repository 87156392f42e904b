"""Notifications: which events go to which apprise URLs, the messages and their sending.

``events`` (the names), ``settings`` (notify.yaml: URLs, events per URL; mode 0600), ``mask`` (URLs are secrets),
``send`` (apprise, 3 tries, never raises), ``messages`` (run id, what, why, final reward; the queue's line),
``run_events`` (``notify_run_event``, ``notify_queue_end``, ``send_test``: what the supervisor and the runners call).

Not here: the supervisor that notices a worker killed outright (``core.launch``), the window's tray
(``app.notify``). docs/notifications.md."""
