"""``python -m svcc`` runs the same entry point as the ``svcc`` console script."""

from svcc.cli.main import main

raise SystemExit(main())
