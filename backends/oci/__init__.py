"""The ``oci`` target: a deterministic image build context around a direct repository bundle.

``svcc compile REPO --target oci --interface TARGET --base-image REF@sha256:... --platform
linux/amd64|linux/arm64 --lock LOCK``. The driver emits the servable target's bundle first,
then this target wraps it (``context.build_context``), running it as the target declares
(``BundleSpec.image_serve``: a port or stdio); no engine and no network are involved. The
lock (read by the driver: a ``File`` option) is checked here against the bundle's
requirements (each locked at an accepted version); the full closure needs the wheels and is
checked when the svc-oci extension builds.
"""

from typing import ClassVar, Literal

from attrs import field, frozen
from svcc.backends.oci.context import build_context
from svcc.contracts.target import BundleSpec, EmitContext, File, FileTree
from svcc.images.bundle_input import BundleInput, bundle_from_tree
from svcc.images.errors import ImageInputError
from svcc.images.lockfile import WheelLock, parse_lock
from svcc.images.reference import parse_reference
from svcc.images.resolve import (
    check_roots,
    marker_environment,
    parse_requirement_lines,
)
from svcc.ir.model import ModuleIR

BASE_PYTHON = "3.11"  # the marker environment the lock is checked in (the base's Python)


def check_lock_roots(bundle: BundleInput, lock: WheelLock, platform: str) -> None:
    """The bundle's server + application requirements are each locked at an accepted version."""
    lines: list[str] = []
    for name in ("requirements.txt", "application-requirements.txt"):
        data = bundle.tree.get(name)
        if data is not None:
            lines += data.decode("utf-8").splitlines()
    check_roots(
        lock, parse_requirement_lines(lines, "bundle"), marker_environment(platform, BASE_PYTHON)
    )


def read_lock(lock: File) -> WheelLock:
    return parse_lock(lock.data, lock.path)


@frozen
class OciTarget:
    """Wraps the bundle of any servable target (``--interface``) through the protocol
    (:class:`~svcc.contracts.target.Wrapper`): the driver emits that bundle first."""

    name: ClassVar[str] = "oci"
    supports_execution_policy: ClassVar[bool] = False
    # writes a build context, not a servable bundle (`svcc serve` does not run it)
    bundle: ClassVar[BundleSpec | None] = None
    description: ClassVar[str] = (
        "an image build context (Containerfile, bundle, lock, delivery plan) for a direct "
        "repository bundle"
    )

    interface: str = field(
        metadata={
            "help": "the servable target whose bundle the image runs (rest, mcp, ...)",
            "metavar": "TARGET",
        }
    )
    base_image: str = field(
        metadata={"help": "base image pinned by digest (REF@sha256:...)", "metavar": "REF"}
    )
    lock: File = field(
        metadata={"help": "wheel lock: name==version --hash=sha256:HEX per line", "metavar": "LOCK"}
    )
    platform: Literal["linux/amd64", "linux/arm64"] = field(
        default="linux/amd64", metadata={"help": "target platform", "metavar": "OS/ARCH"}
    )
    source_date_epoch: int = field(
        default=0,
        metadata={"help": "time of org.opencontainers.image.created", "metavar": "SECONDS"},
    )

    def wrapped_target(self) -> str:
        return self.interface

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:  # noqa: ARG002 (the bundle holds it)
        if ctx.bundle is None or ctx.served is None:
            raise ImageInputError(
                "bundle_invalid", "the oci target wraps a bundle: emit it through the driver"
            )
        return self.wrap(bundle_from_tree(ctx.bundle), ctx.served)

    def wrap(self, bundle: BundleInput, served: BundleSpec | None = None) -> FileTree:
        """The context for a validated bundle (in memory, or read from disk by the svc-oci
        extension) of the servable target ``served`` declares (default: ``--interface``'s,
        from the registry)."""
        if served is None:
            from svcc.compiler.registry import servable_target

            served = servable_target(self.interface, self.name)[1]
        if not self.base_image:
            raise ImageInputError("base_not_pinned", "--base-image is required (REF@sha256:...)")
        if bundle.interface != self.interface:
            raise ImageInputError(
                "bundle_invalid",
                f"the bundle serves {bundle.interface}, the target asks for {self.interface}",
            )
        base = parse_reference(self.base_image, what="base image", require_digest=True)
        lock = read_lock(self.lock)
        check_lock_roots(bundle, lock, self.platform)
        return build_context(
            bundle,
            served,
            base=base,
            platform=self.platform,
            lock=lock,
            source_date_epoch=self.source_date_epoch,
        )
