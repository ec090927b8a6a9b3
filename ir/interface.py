"""Which parameters make up a capability's interface, and what its answers hold: one rule
for the schemas and readiness.

A parameter whose type has no JSON shape (a callback, an arbitrary object) but which has a
default is left out of the request: it is never sent, so every call applies the function's
own default. Without a default it stays in and readiness refuses the capability.
"""

from svcc.ir.model import Capability, Parameter, Returns
from svcc.ir.types import UnresolvedType, UnsupportedType, iter_leaves


def left_out(param: Parameter) -> bool:
    """True when ``param`` is not part of the request (see the module docstring)."""
    if param.required or param.kind in ("var_positional", "var_keyword"):
        return False
    leaves = iter_leaves(param.type)
    return any(isinstance(leaf, UnsupportedType) for leaf in leaves) and not any(
        isinstance(leaf, UnresolvedType) for leaf in leaves
    )


def answered(cap: Capability) -> Returns:
    """What one value a capability answers is: a stream's item (each yielded value is
    encoded, documented and judged as a result is), else its return value."""
    stream = cap.stream
    if stream is None:
        return cap.returns
    return Returns(annotation=stream.annotation, type=stream.item, span=stream.span)
