"""The catalog lives in a data file beside this module (shop/catalog.json), read when asked.

Reading it inside the function keeps the module free of import-time effects. A bundle carries
only Python sources today, so the walkthrough (examples/ship.sh) does not serve this function
yet: it is selected once bundles carry declared data files (`[tool.svcc] data-files`).
"""

import json
from pathlib import Path


def price_of(sku: str) -> float:
    """The list price of one catalog item."""
    items = json.loads(Path(__file__).with_name("catalog.json").read_text(encoding="utf-8"))
    return float(items[sku]["price"])
