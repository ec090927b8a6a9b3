"""A counter whose state must not survive a call under governed execution."""

_TOTAL: list[int] = []


def tally(amount: int, /, *, note: str = "") -> int:
    """Add an amount to a running total (reset on every governed call)."""
    _TOTAL.append(amount)
    return sum(_TOTAL)
