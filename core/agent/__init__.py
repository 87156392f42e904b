"""What a run trained, put to use: a checkpoint loaded with its own normalisation, evaluated, played, recorded
and exported. Like the worker it imports torch and SB3; everything else reaches it as a child process
(``python -m core.agent.<tool>``, started by ``core.launch.agent_child``).

``load`` (``load_policy``: the checkpoint's model and a fresh env with its own VecNormalize statistics, frozen),
``tool`` (every tool's frame: common arguments, one JSON line, one-line errors), ``evaluate`` (N episodes as SB3
counts them, kept in evaluations.jsonl), ``export`` (ONNX or TorchScript + FILE.json), ``export_model``
(``ExportedPolicy``, ``ExportRefused``), ``export_sidecar``, ``export_check`` (--check against SB3's predict),
``frames`` (the agent playing, frame by frame), ``play`` (the frame stream for Watch), ``video`` (MP4 or GIF),
``record`` (a video of a checkpoint)."""
