"""A run's folder copied into a tracker: MLflow or Weights & Biases (``rlpanel sync``, ``runtime.sync``).

``source`` reads a run folder into a neutral form (flat params, tags, metric points at their steps, artifacts);
``ledger`` keeps in the run folder what each destination already holds, so a second sync sends only what is new;
``mlflow_target`` and ``wandb_target`` write it through each library's own API, imported only when used (the
``mlflow`` and ``wandb`` extras); ``sync`` chooses the target and follows a live run; ``settings`` is the user's
``sync.yaml`` (the URI, experiment and project ``runtime.sync`` uses); ``auto`` is what the supervisor runs.
ARCHITECTURE.md, "The packages" (core/sync/).
"""
