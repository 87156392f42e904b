"""Small widgets the panels share: ``toolbar`` and ``toolbar_items`` (a row whose overflow goes behind »),
``elided_label``, ``wrap_label``, ``fit_list``, ``tree``, ``lazy_tabs`` (a tab's page built when first shown),
``screen_fit``, ``name_combo``, ``cluster_field`` (the Queue and Sweeps tabs' Ray cluster field)."""
