from . import helpers  # expect: SVC-R021
from .input import thing  # noqa: F401  # expect: SVC-R021


def use(x: int) -> int:
    return helpers.f(x)
