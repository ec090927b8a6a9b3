"""Print ``docs/diagnostics.md``: ``python -m svcc.compiler.diagnostics > docs/diagnostics.md``."""

import sys

from svcc.compiler.diagnostics.codes import markdown_table

sys.stdout.write(markdown_table())
