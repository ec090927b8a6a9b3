"""A handle one function sets and another uses (certifi's ``exit_cacert_ctx``): every call
of the reader fails until the writer has run, and a governed call never sees the writer."""

_CTX = None
_count = 0


def open_ctx(path: str) -> str:
    global _CTX
    _CTX = open(path)  # noqa: SIM115  # expect: SVC-R036
    return path


def close_ctx() -> None:
    _CTX.close()  # expect: SVC-R025


def cached() -> int:
    global _count
    _count += 1
    return _count


def shadowed(_CTX: int) -> int:
    return _CTX


def local_copy() -> int:
    _count = 3
    return _count
