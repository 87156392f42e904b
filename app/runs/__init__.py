"""The Runs tab: every run in the runs folder, with its buttons (resume, open, show folder, agent).

``panel`` (listing, selection, buttons), ``rows`` (a run's row: columns, tooltips, sort keys, a failed run's error),
``notes_box`` (name, tags, note)."""
