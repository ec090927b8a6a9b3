"""The catalog lives in a data file beside this module (shop/catalog.json), read when asked.

Reading it inside the function keeps the module free of import-time effects. The project
declares the file (`[tool.svcc] data-files` in pyproject.toml), so the bundle and the image
carry it beside this module, verified at startup.
"""

import json
from pathlib import Path


def price_of(sku: str) -> float:
    """The list price of one catalog item."""
    items = json.loads(Path(__file__).with_name("catalog.json").read_text(encoding="utf-8"))
    return float(items[sku]["price"])
