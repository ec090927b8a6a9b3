"""Modules copied byte for byte into generated bundles.

Nothing under ``runtime/`` may import ``svcc``: a bundle must run without svcc installed
(``tests/test_layering.py`` checks it).
"""
