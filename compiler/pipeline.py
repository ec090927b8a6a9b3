"""The passes, in order. Each is named (kebab-case), pure, and lives in its own module."""

from svcc.compiler.passes.readiness import ReadinessPass
from svcc.compiler.passes.select import SelectPass

PASSES = (ReadinessPass, SelectPass)

__all__ = ["PASSES"]
