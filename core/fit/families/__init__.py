"""One module per network family (what SB3 builds for a policy), and ``registry.FAMILIES``: the family each
algorithm's spec names, with the shape it counts."""
