"""``python -m ksched.cli``: the ``ksched`` command."""

import sys

from ksched.cli import main

sys.exit(main())
