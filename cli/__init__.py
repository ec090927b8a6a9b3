"""The command line on top of everything: argparse (``main``), rendering, ``expose``,
``serve`` and the ``images``/``plugins`` command glue (docs/layout.md)."""
