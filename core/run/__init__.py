"""A run is a folder: its format and its readers. The worker writes it, everyone else reads it; it is the
contract between the processes (docs/run-folder.md: every file, who writes it, who reads it).

``layout`` (``RunDir``: the files' names), ``states``, ``status`` (the typed status.json), ``records`` and
``episodes`` (metrics.jsonl's records; episodes past a rate as aggregates), ``store`` (``RunStore``, ``RunInfo``:
list and create runs), ``lock``, ``summary`` and ``summary_file`` (summary.json), ``checkpoints`` (which checkpoint
a resume uses) and ``checkpoint_read`` (one read whole), ``evaluations``, ``annotations`` (name, tags, note),
``names`` (``run_label``: the one name every view shows). Readings: ``reached`` (the step reached; the resume
command), ``resume_words`` (the automatic resumes in words), ``eta``, ``time_split`` (where the time goes, and the
advice), ``card_history`` (a card's last runs: peak over estimate), ``sysmem_fallback``, ``path_length`` (a runs
folder too deep for Windows), ``frame_stream`` (the frames the player streams to Watch), ``tensorboard`` (a
TensorBoard child on a run's tb/). ``cache/``: the column cache.

Not here: starting, stopping and resuming runs (``core.launch``), writing the records (the worker)."""
