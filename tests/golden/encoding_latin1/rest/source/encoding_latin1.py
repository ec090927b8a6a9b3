# -*- coding: latin-1 -*-
"""Café helpers: déjà vu."""


def café(prix: float) -> str:
    """Prix en écus."""
    return f"{prix} écus"
