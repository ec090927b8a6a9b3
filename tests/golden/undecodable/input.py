"""Not UTF-8."""


def f() -> str:
    return "ÿþ"  # expect: SVC-F002
