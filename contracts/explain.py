"""How a structuring failure (cattrs, with attrs validators) is told to a user: one rule
for the execution policy and the analysis service's configuration alike.

Each problem is named by its JSON path (``$.limits.wall_time_ms: ...``); a validator's own
message wins over cattrs' generic wording.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cattrs import ClassValidationError


def _explain(exc: BaseException, kind: type | None) -> str:
    from cattrs.v import format_exception

    if type(exc) is ValueError and str(exc):
        return str(exc)
    return format_exception(exc, kind)


def structure_problems(exc: "ClassValidationError", root: str) -> list[str]:
    """Every problem under ``exc``, each prefixed by its path from ``root``."""
    from cattrs import transform_error

    return transform_error(exc, path=root, format_exception=_explain)
