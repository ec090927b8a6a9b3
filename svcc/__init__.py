"""svcc: compile ordinary Python code into services.

The root package is deliberately tiny: every real module lives in a sub-package
(``svcc.ir``, ``svcc.compiler``, ...) mapped from a top-level folder, and importing
``svcc`` must stay free so that ``svcc --help`` and ``svcc inspect`` start fast.
"""

__version__ = "0.1.0"
