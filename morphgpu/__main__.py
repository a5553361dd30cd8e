"""``python -m morphgpu``: the ``morphgpu`` command."""

import sys

from .cli import main

sys.exit(main())
