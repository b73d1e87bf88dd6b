"""``python -m gradcheck``: the same as the ``gradcheck`` console script."""

import sys

from .cli import main

sys.exit(main())
