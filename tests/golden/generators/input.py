from collections.abc import Iterator


def count(n: int) -> Iterator[int]:  # expect: SVC-R016 SVC-R018
    yield from range(n)


def squares(n: int):  # expect: SVC-R016
    for i in range(n):
        yield i * i


def outer(n: int) -> list[int]:
    def inner():
        yield n

    return list(inner())


def mentions(text: str = "yield") -> str:
    return text.replace("yield", "give")
