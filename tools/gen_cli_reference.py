"""Write ``docs/reference/cli.md`` from the argparse parser itself, so the reference cannot
drift from the command line: ``python tools/gen_cli_reference.py > docs/reference/cli.md``.
``tests/project/test_docs.py`` regenerates it and fails when the page differs (a flag added, a help
text changed).

Each command's page section is its ``--help`` as a terminal 100 columns wide shows it; a
target's own options (``compile --target NAME``) depend on what is installed, so they are
left to ``svcc compile --target NAME --help`` and ``svcc targets``.
"""

import argparse
import os
import sys

WIDTH = "100"

HEADER = """# Command line reference

Generated from the argparse definitions by `python tools/gen_cli_reference.py >
docs/reference/cli.md`; a test fails when the page and the parser disagree. Every command
prints the same text with `--help`. `svcc` and `svc` are the same program.

A target's own options follow `--target NAME` on the command line (`svcc compile FILE
--target sample --style table --output-dir DIR`): `svcc compile --target NAME --help` shows
them and `svcc targets` lists every installed target's.
"""


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The parser's subcommands in the order ``--help`` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _sections(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
    title = " ".join(words)
    out = [f"## `{title}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for name, child in _subcommands(parser):
        out += _sections(child, [*words, name])
    return out


def render() -> str:
    """The whole page, for a terminal of ``WIDTH`` columns."""
    os.environ["COLUMNS"] = WIDTH
    from svcc.cli.parser import build_parser

    parser = build_parser()
    return "\n".join([HEADER, *_sections(parser, ["svcc"])]).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
