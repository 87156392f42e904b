"""The trained agent put to use from the window: the Runs tab's Agent menu and its dialogs and Watch panel."""
