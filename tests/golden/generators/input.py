from collections.abc import Generator, Iterator


def count(n: int) -> Iterator[int]:
    yield from range(n)


def squares(n: int):  # expect: SVC-R018
    for i in range(n):
        yield i * i


def outer(n: int) -> list[int]:
    def inner():
        yield n

    return list(inner())


def mentions(text: str = "yield") -> str:
    return text.replace("yield", "give")


def echo(n: int) -> Generator[int, int, None]:  # expect: SVC-R016
    yield n


def running_total(start: int) -> Iterator[int]:
    total = start
    while True:
        sent = yield total  # expect: SVC-R016
        total += sent


def listed(n: int) -> list[int]:  # expect: SVC-R016
    yield n


def any_items(n: int) -> Iterator:  # expect: SVC-R018
    yield n
