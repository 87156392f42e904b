"""``python -m app``: the same as the ``rlpanel`` command."""

import sys

from app.entry import main

sys.exit(main())
