def everything(a: int, b: int = 1, /, c: int = 2, *, d: int, e: int = 3) -> int:
    """Positional-only with defaults, positional-or-keyword, keyword-only."""
    return a + b + c + d + e


def posonly_gap(x: int = 0, y: int = 1, /) -> int:
    return x + y


def kwonly(*, flag: bool = False, name: str) -> str:
    return name if flag else ""


def no_params() -> str:
    return "ok"
