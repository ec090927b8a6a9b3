from typing import Literal

Mode = Literal["fast", "slow"]


def run(mode: Literal["fast", "slow"] = "fast") -> str:
    return mode


def codes(code: Literal[1, -2, True, None]) -> str:
    return str(code)


def nested(level: Literal[Literal["a", "b"], "c"], alias: Mode = "slow") -> str:
    return level + alias
