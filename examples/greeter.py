"""A service class: the vocabulary is loaded once at startup, each call only greets."""

import json
from pathlib import Path

HERE = Path(__file__).parent


class Greeter:
    """Greets in the words of its vocabulary."""

    def __init__(self) -> None:
        self.words = json.loads((HERE / "words.json").read_text())

    def setup(self) -> None:
        self.greeting = self.words["hello"]

    def greet(self, name: str, times: int = 1) -> str:
        """Greet someone.

        Args:
            name: who to greet.
            times: how many times.
        """
        return " ".join([f"{self.greeting}, {name}"] * times)
