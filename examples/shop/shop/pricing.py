"""Totals of a basket: the line items, a percentage discount and tax, in whole cents."""

from shop.money import from_cents, to_cents


def total(prices: list[float], discount_percent: float = 0.0, tax_percent: float = 0.0) -> float:
    """The basket's total after the discount, then the tax."""
    if not 0 <= discount_percent <= 100:
        raise ValueError("discount_percent must be between 0 and 100")
    subtotal = sum(to_cents(p) for p in prices)
    discounted = subtotal * (100 - discount_percent) / 100
    return from_cents(to_cents(from_cents(round(discounted)) * (100 + tax_percent) / 100))


def line(price: float, quantity: int) -> float:
    """One line of a basket: the price times the quantity."""
    return from_cents(to_cents(price) * quantity)
