def gather(*values: int) -> int:  # expect: SVC-R014
    return sum(values)


def options(name: str, **extra: str) -> str:  # expect: SVC-R015
    return name


def both(*args, **kwargs):  # expect: SVC-R014 SVC-R015
    return None
