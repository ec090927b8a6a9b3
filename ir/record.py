"""One ``__repr__`` for svcc's attrs records, written once instead of compiled per class.

attrs compiles the methods it generates for each class when the class is defined, and the
``__repr__`` is about half of that source. svcc defines some forty records on every start
of ``svcc inspect`` (the IR, diagnostics, readiness), where start-up is most of the cost
of a small file. Records declared ``@frozen(..., repr=False)`` that derive from
:class:`Record` print exactly what attrs would print, from this one function.
"""

from typing import Any

import attrs

_FIELDS: dict[type, tuple[str, ...]] = {}


def _repr_fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in attrs.fields(cls) if f.repr)
    return names


class Record:
    """Base of attrs records that take their ``__repr__`` from here (``repr=False``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        cls: Any = type(self)
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _repr_fields(cls))
        return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({shown})"
