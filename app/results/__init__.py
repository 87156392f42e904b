"""The Results tab: the ticked runs' curves and table.

``panel``, ``model`` (the table's rows), ``columns`` (the table's columns, ``ColumnChooser``), ``run_names``,
``loader`` (run folders read in the background), ``morning`` (the morning report dialog), ``curve_mode`` (Seeds each
run / launch group / config; mean or IQM; the group curves computed off the GUI thread)."""
