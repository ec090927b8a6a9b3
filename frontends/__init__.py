"""Front ends: source (``.py``, ``.ipynb``) to IR, by reading, never by running."""
