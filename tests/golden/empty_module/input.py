"""Nothing to expose here."""

import os

_PRIVATE = os.sep
