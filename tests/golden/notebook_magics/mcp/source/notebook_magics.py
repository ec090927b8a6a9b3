# %% [cell 2]

import math


# %% [cell 4]
def hypot(a: float, b: float) -> float:
    """Hypotenuse."""
    return math.sqrt(a * a + b * b)


# %% [cell 5]
def percent(x: float) -> str:
    # a string containing a percent line is untouched
    text = """
%d items
"""
    return f"{x:.1%}"
