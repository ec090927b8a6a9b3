from typing import Optional


def pep604(limit: int | None = None) -> int:
    return limit or 0


def classic(limit: Optional[int] = None) -> int:
    return limit or 0


def none_default(limit: int = None) -> int:  # not nullable: omission allowed, null refused
    return limit or 0


def required_nullable(value: str | None) -> str:
    return value or ""


def mixed(value: int | str | float) -> str:
    return str(value)
