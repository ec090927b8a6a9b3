from . import helpers  # expect: SVC-R008
from .input import thing  # noqa: F401


def use(x: int) -> int:
    return helpers.f(x)
