"""The fenced blocks of the manual (``docs/``) and the README, read as the tests run them.

A block's language says what it is: ``sh`` is commands, run in order with the page's other
``sh`` blocks as one script; ``console`` is ``$ command`` lines each followed by the exact
output it prints; a block with a ``title="name"`` (``python title="client.py"``) is a file
the page's commands use, written into the page's working folder first. Everything else is an
excerpt (code, JSON, a tree). A command block that cannot run here (it needs a registry, an
agent, a cluster) is preceded by ``<!-- not-run: why -->``; the reason is listed by the test.
A block without a language is refused, so no command goes unnoticed.
"""

import re
from pathlib import Path

from attrs import frozen

RUNNABLE = ("sh", "console")

_FENCE = re.compile(
    r"^(?P<indent> *)```(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
_NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<reason>.+?)\s*-->\s*$")
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')


@frozen
class Block:
    page: Path
    line: int
    language: str
    title: str | None
    text: str
    not_run: str | None  # the reason, when the page marks the block as not runnable

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order (indented ones, under a list item, too)."""
    text = page.read_text()
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _NOT_RUN.search(before)
        info = match["info"].strip()
        title = _TITLE.search(info)
        indent = len(match["indent"])
        body = "".join(line[indent:] for line in match["body"].splitlines(keepends=True))
        found.append(
            Block(
                page=page,
                line=text.count("\n", 0, match.start()) + 1,
                language=info.split(" ", 1)[0],
                title=title["title"] if title else None,
                text=body,
                not_run=marker["reason"] if marker else None,
            )
        )
    return found


def console_commands(block: Block) -> list[tuple[str, str]]:
    """``(command, expected output)`` for each ``$ `` line of a ``console`` block."""
    pairs: list[tuple[str, str]] = []
    for line in block.text.splitlines(keepends=True):
        if line.startswith("$ "):
            pairs.append((line[2:].rstrip("\n"), ""))
        elif pairs:
            command, output = pairs[-1]
            pairs[-1] = (command, output + line)
    return pairs
