"""``python -m icefloe.rest``: see ``serve.py``."""

import sys

from icefloe.rest.serve import main

sys.exit(main())
