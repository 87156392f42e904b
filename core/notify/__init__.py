"""Notifications: which events go to which apprise URLs, the messages, sending, and the supervisor
that reports a worker killed outright (ARCHITECTURE.md, "Notifications")."""
