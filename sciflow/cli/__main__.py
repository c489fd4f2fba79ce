"""``python -m sciflow.cli``."""

import sys

from sciflow.cli import main

sys.exit(main())
