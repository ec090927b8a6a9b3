"""Schema identifiers of the documents svcc writes; bumped only with a migration note."""

from typing import Final

IR_SCHEMA: Final = "svc.capability-ir/v1"
READINESS_SCHEMA: Final = "svc.readiness/v1"
