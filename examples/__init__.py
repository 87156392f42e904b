"""Examples that train with rlpanel: importable from a source checkout (``examples.graph_env``)."""
