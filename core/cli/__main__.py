"""``python -m core.cli``: the ``rlpanel`` command without the window."""

import sys

from core.cli.main import main

sys.exit(main())
