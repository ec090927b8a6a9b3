"""``python -m svcc`` runs the same entry point as the ``svcc`` console script."""

from svcc.compiler.cli import main

raise SystemExit(main())
