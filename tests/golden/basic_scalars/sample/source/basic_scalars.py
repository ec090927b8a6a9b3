"""Scalars: every JSON scalar type as a parameter."""


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def ratio(x: float, y: float = 1.0) -> float:
    return x / y


def greet(name: str, shout: bool = False) -> str:
    text = f"hello {name}"
    return text.upper() if shout else text


def nothing(value: None) -> None:
    return value
