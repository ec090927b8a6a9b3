"""The one exception root and the few kinds the CLI maps to exit codes.

Passes and front ends return diagnostics; these are raised only for usage and I/O
problems (exit 2), an ineligible selection (exit 1) and broken invariants (bugs).
"""

from collections.abc import Sequence
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from svcc.contracts.diagnostics import Diagnostic


class ExitCode(IntEnum):
    OK = 0
    INELIGIBLE = 1
    INPUT = 2
    INTERNAL = 3
    # A generated server that refuses to start (its bundle changed, a startup check
    # failed): ``svc_runtime.integrity.STARTUP_REFUSED``, the same number.
    STARTUP_REFUSED = 4


class SvccError(Exception):
    exit_code = ExitCode.INPUT


class InputError(SvccError):
    """Missing or unreadable input, unsupported format, syntax error, bad option value."""


class OutputError(SvccError):
    """The output directory is refused (non-empty, symlinked) or could not be written."""


class UsageError(SvccError):
    """A request that cannot be understood: unknown target, unknown selection."""


class IneligibleError(SvccError):
    """A selected capability is not eligible; the message carries each reason's code and
    message; ``reasons`` are the diagnostics themselves and ``details`` each one rendered
    with its source line, for text output."""

    exit_code = ExitCode.INELIGIBLE

    def __init__(self, message: str, reasons: "Sequence[Diagnostic]" = ()) -> None:
        super().__init__(message)
        self.reasons = tuple(reasons)
        self.details: tuple[str, ...] = ()


class InternalError(SvccError):
    """A broken invariant inside svcc: always a bug."""

    exit_code = ExitCode.INTERNAL
