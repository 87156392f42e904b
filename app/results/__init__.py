"""The Results tab: ``panel`` (overlay, table, export), ``model`` (the table's Qt model) and
``loader`` (run folders read in the background)."""
