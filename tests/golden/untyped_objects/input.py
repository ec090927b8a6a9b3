"""Unannotated parameters used as objects no JSON value is (data-science helpers)."""

import numpy as np  # expect: SVC-R008
import pandas as pd  # expect: SVC-R008


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


def digit(data, i):  # expect: SVC-R004 SVC-R004
    return data[i].reshape(8, 8)  # expect: SVC-R037


def group_total(x):  # expect: SVC-R004
    return x["data2"].sum()  # expect: SVC-R037


def names(rows):  # expect: SVC-R004
    return [row.name for row in rows]  # expect: SVC-R037


def ndim(img):  # expect: SVC-R004
    view = img
    return len(view.shape)  # expect: SVC-R037


def first_column(X):  # expect: SVC-R004
    return X[:, 0]  # expect: SVC-R037


def values_of(table):  # expect: SVC-R004
    return [v.tolist() for _, v in table.items()]  # expect: SVC-R037


def joined(df, other):  # expect: SVC-R004 SVC-R004
    return pd.concat([df, other])  # expect: SVC-R037 SVC-R037


def to_lower(doc):  # expect: SVC-R004
    return doc.lower()


def next_of_first(x):  # expect: SVC-R004
    return x[0] + 1


def dot(x, w):  # expect: SVC-R004 SVC-R004
    return np.dot(x, w)


def tail_length(x):  # expect: SVC-R004
    x = x[1:]
    return [word.upper() for word in x]
