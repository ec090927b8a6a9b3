"""Functions that read the command line are not servable."""

import sys

import click  # expect: SVC-R008


def first_argument() -> str:
    return sys.argv[1]  # expect: SVC-R038


@click.command()  # expect: SVC-R038 SVC-R001 SVC-R007
def cli() -> None:
    pass


def greet(name: str) -> str:
    return f"hello {name}"
