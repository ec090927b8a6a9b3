def area(r: float) -> float:  # expect: SVC-R002
    return 3.14 * r * r


def area(r: float) -> float:
    return 3.14159 * r * r


def perimeter(r: float) -> float:
    return 2 * 3.14 * r


perimeter = area  # expect: SVC-R002


def temporary(x: int) -> int:
    return x


del temporary  # expect: SVC-R003 SVC-R007
