from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def size(frame: pd.DataFrame) -> int:  # expect: SVC-R053
    return len(frame)


def label(n: int) -> str:
    return str(n)
