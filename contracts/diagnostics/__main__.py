"""Print ``docs/diagnostics.md``: ``python -m svcc.contracts.diagnostics > docs/diagnostics.md``."""

import sys

from svcc.contracts.diagnostics.codes import markdown_page

sys.stdout.write(markdown_page())
