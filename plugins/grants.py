"""Which grant of the operator policy each extension operation needs: one table.

``svc plugins run NAME OP`` authorises before the extension starts or any input is read: the
operation's arguments are parsed as its request and checked against the operator policy's
grant for it, bound to the installed extension (DESIGN §8). An operation missing from the
table has no grant that could authorise it, so it never runs, whatever the extension offers.
"""

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from attrs import frozen
from svcc.images.push_request import (
    PUSH_PERMISSIONS,
    check_push_grant,
    parse_push_request,
)
from svcc.images.request import (
    BUILD_PERMISSIONS,
    PluginIdentity,
    check_build_grant,
    parse_build_request,
)
from svcc.plugins.errors import PluginError


@frozen
class Grant:
    """The policy grant one operation needs: its ``operation`` name in the policy, the exact
    ``permissions`` it must hold, and ``check`` (parse the arguments, find a grant bound to
    them and to the extension; a refusal names what differs)."""

    name: str
    permissions: frozenset[str]
    check: Callable[[object, object, PluginIdentity], None]


def _build(policy: object, arguments: object, plugin: PluginIdentity) -> None:
    check_build_grant(policy, parse_build_request(arguments), plugin)


def _push(policy: object, arguments: object, plugin: PluginIdentity) -> None:
    check_push_grant(policy, parse_push_request(arguments), plugin)


GRANTS: Final[Mapping[str, Grant]] = MappingProxyType(
    {
        "build": Grant("image.build", BUILD_PERMISSIONS, _build),
        "push": Grant("image.push", PUSH_PERMISSIONS, _push),
    }
)


def authorise(operation: str, arguments: object, policy: object, plugin: PluginIdentity) -> None:
    """The grant ``operation`` needs, or a refusal (``grant_missing``/``grant_mismatch``,
    ``request_invalid`` for arguments that are not the operation's request)."""
    grant = GRANTS.get(operation)
    if grant is None:
        raise PluginError("grant_missing", f"no grant can authorise operation {operation!r}")
    grant.check(policy, arguments, plugin)
