def fetch(url: str) -> int:
    import requests  # expect: SVC-R009

    return requests.get(url).status_code


def parse(text: str) -> dict[str, int]:
    try:
        import orjson as loader
    except ImportError:
        import json as loader
    return loader.loads(text)


def stdlib_only(text: str) -> str:
    import textwrap

    return textwrap.dedent(text)
