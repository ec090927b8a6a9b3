"""Money is rounded once, here, to whole cents."""


def to_cents(amount: float) -> int:
    """An amount in cents, rounded half away from zero."""
    cents = abs(amount) * 100 + 0.5
    return int(cents) if amount >= 0 else -int(cents)


def from_cents(cents: int) -> float:
    """Cents as an amount."""
    return cents / 100
