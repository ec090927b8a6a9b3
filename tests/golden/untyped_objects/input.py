"""Unannotated parameters used as objects no JSON value is (data-science helpers)."""

import numpy as np  # expect: SVC-R008


def height(img):  # expect: SVC-R004
    return img.shape[0]  # expect: SVC-R037


def clean(df):  # expect: SVC-R004
    return df.dropna()  # expect: SVC-R037


def first_row(df):  # expect: SVC-R004
    return df.iloc[0]  # expect: SVC-R037


def rebuilt(df):  # expect: SVC-R004
    df = np.asarray(df)
    return df.shape


def words(text):  # expect: SVC-R004
    return text.split()


def total(values: list[float]) -> float:
    return sum(values)
