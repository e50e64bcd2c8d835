"""``python -m leapp_notebook check ...``: the same as the ``leapp-notebook`` console script."""

import sys

from .cli import main

sys.exit(main())
