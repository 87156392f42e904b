"""A small graph env and a plain-torch graph-attention network: "your own network" (README)."""
