"""What a run trained, put to use: a checkpoint loaded with its own normalisation (``load``), evaluated,
played, recorded and exported. Like ``core.training`` it imports torch and SB3; everything else
reaches it as a child process (``python -m core.policy.<tool>``, started by ``core.run.policy_child``)."""
