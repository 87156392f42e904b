"""The night's plan: jobs run one after another (or N at once) by a detached runner.

``plan`` (``Plan``, ``PlanJob``: the YAML of jobs), ``record`` (the state file's typed records), ``state``
(``QueueFolder``: a RunnerFolder, the scheduling rules), ``control`` (start, continue, cancel, resume a dead
runner), ``runner`` (the detached process), ``autostart`` (the per-user log-on entry that resumes the queue: Task
Scheduler or a Startup .cmd on Windows, XDG autostart on Linux). Each job starts through the one launch path.
docs/processes.md."""
