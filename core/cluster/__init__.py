"""Runs on a Ray cluster: each run a Ray job whose entrypoint is the run's supervisor.

``client`` (the job API imported lazily, one client per address, errors with the fix), ``target``
(``ClusterTarget``: address, the nodes' python, the runs folder as the nodes see it), ``resources``
(``JobResources`` from the config and the estimate), ``jobs`` (submit, ``JobView``, stop, settle), ``submit``
(``python -m core.cluster.submit``: what the launch runs for a cluster run), ``probe`` and ``doctor`` (the cluster's
report). docs/processes.md."""
