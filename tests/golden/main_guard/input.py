"""A script with a main guard: nothing runs at import."""

import argparse


def convert(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("c", type=float)
    print(convert(parser.parse_args().c))  # expect: SVC-R038


if __name__ == "__main__":
    main()
    convert = None
