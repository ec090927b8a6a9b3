def ok(x: int) -> int:
    return x


def broken(x: int -> int:  # expect: SVC-F001
    return x
