"""The trained agent put to use from the window, through ``core.launch.agent_child`` (the window loads no
torch): ``menu`` (``AgentMenu``: the Runs tab's Agent button), ``evaluate_dialog``, ``export_dialog``,
``record_dialog``, ``checkpoint_picker``, ``watch`` (``WatchWindow``: the player's frames scaled to fit),
``frame_reader`` (the frame stream read on a thread of its own, paced at the env's fps)."""
