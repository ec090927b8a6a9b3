"""The plugin runner's own refusals: installing, enabling, authorising and running an extension.

A :class:`PluginError` is an input error (exit 2) with a stable code. Its codes are a few of
the ``svc.extension/v1`` codes (:data:`svcc.images.errors.CODES`, the one table that
docs/oci.md documents and tools match on), so it is an :class:`ImageInputError`: whoever
reports a refused image input by its code reports the runner's the same way (svc-oci itself
runs :func:`svcc.plugins.wheels.locked_wheels`). What the type adds is the bound:
the runner can only say what it owns.
"""

from typing import Final

from svcc.images.errors import ImageInputError

# the codes the runner raises itself; a refusal of the request's own content (a bad build or
# push request, a grant that does not match) is the image request parser's and keeps its type
PLUGIN_CODES: Final = frozenset(
    {
        "plugin_invalid",
        "plugin_hash_mismatch",
        "plugin_not_enabled",
        "request_invalid",
        "grant_missing",
        "lock_invalid",
        "wheel_invalid",
    }
)


class PluginError(ImageInputError):
    """A refusal by the plugin runner; ``code`` is one of :data:`PLUGIN_CODES`."""

    def __init__(self, code: str, message: str) -> None:
        if code not in PLUGIN_CODES:
            raise ValueError(f"{code!r} is not a plugin runner code")
        super().__init__(code, message)
