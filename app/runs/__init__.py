"""The Runs tab: every run in the runs folder, with resume, open and show-folder."""
