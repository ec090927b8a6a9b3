"""Agent hints: one function per outcome of the effect analysis (MCP tool annotations)."""

import json
import subprocess
import sysconfig
import urllib.request
from pathlib import Path

HERE = Path(__file__).parent


def circle_area(radius: float) -> float:
    return 3.141592653589793 * radius * radius


def price_of(item: str) -> float:
    """Look up an item's price in the bundled price list."""
    prices = json.loads((HERE / "prices.json").read_text())
    return float(prices[item])


def save_note(path: str, text: str) -> int:
    """Write a note to a file."""
    with open(path, "w") as handle:  # expect: SVC-R039
        return handle.write(text)


def disk_usage(folder: str) -> str:
    """Report a folder's disk usage with du."""
    done = subprocess.run(["du", "-s", folder], capture_output=True, text=True)  # expect: SVC-R039
    return done.stdout


def status_of(url: str) -> int:
    """Fetch a URL and answer its HTTP status."""
    with urllib.request.urlopen(url) as response:
        return int(response.status)


def platform_name() -> str:
    return sysconfig.get_platform()
