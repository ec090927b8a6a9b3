"""The alternatives of one try/except ImportError are judged together."""

try:  # neither alternative is standard library or declared: the module cannot import
    import unidecode  # expect: SVC-R008
except ImportError:
    import text_unidecode as unidecode

try:  # the standard library provides the fallback: fine
    import ujson as json_impl
except ImportError:
    import json as json_impl

try:  # no handler catches an ImportError: the import is required
    import simplejson  # expect: SVC-R008
except AttributeError:
    simplejson = None


def slug(text: str) -> str:
    return unidecode.unidecode(text)


def dumps(value: dict[str, int]) -> str:
    return json_impl.dumps(value)
