import os

import pandas as pd  # expect: SVC-R008
from sklearn.linear_model import LinearRegression  # expect: SVC-R008


def rows(path: str) -> int:
    return len(pd.read_csv(path))  # expect: SVC-R036


def cwd() -> str:
    return os.getcwd()
