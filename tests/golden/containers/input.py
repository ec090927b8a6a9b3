def total(values: list[int]) -> int:
    return sum(values)


def prices(table: dict[str, float]) -> list[str]:
    return sorted(table)


def pair(p: tuple[int, str]) -> str:
    return f"{p[0]}:{p[1]}"


def many(items: tuple[float, ...], empty: tuple[()] = ()) -> int:
    return len(items) + len(empty)


def nested(rows: list[dict[str, list[int]]]) -> int:
    return sum(len(r) for r in rows)


def bare(xs: list, m: dict, t: tuple) -> int:
    return len(xs) + len(m) + len(t)
