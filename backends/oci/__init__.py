"""The ``oci`` target: a deterministic image build context around a direct repository bundle.

``svcc compile REPO --target oci --interface rest|mcp --base-image REF@sha256:... --platform
linux/amd64|linux/arm64 --lock LOCK``. The REST or MCP bundle is emitted first, then wrapped
(``context.build_context``); no engine and no network are involved. The lock is checked here
against the bundle's requirements (each locked at an accepted version); the full closure
needs the wheels and is checked when the svc-oci extension builds.
"""

from pathlib import Path
from typing import ClassVar, Literal

from attrs import field, frozen
from svcc.backends.oci.context import build_context
from svcc.compiler.images.bundle_input import BundleInput, bundle_from_tree
from svcc.compiler.images.errors import ImageInputError
from svcc.compiler.images.lockfile import WheelLock, parse_lock
from svcc.compiler.images.reference import parse_reference
from svcc.compiler.images.resolve import (
    check_roots,
    marker_environment,
    parse_requirement_lines,
)
from svcc.compiler.target import BundleSpec, EmitContext, FileTree
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


def read_lock(path: str) -> WheelLock:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImageInputError("lock_invalid", f"{path}: {exc.strerror}") from None
    return parse_lock(data, path)


@frozen
class OciTarget:
    name: ClassVar[str] = "oci"
    supports_execution_policy: ClassVar[bool] = False
    # writes a build context, not a servable bundle (`svcc serve` does not run it)
    bundle: ClassVar[BundleSpec | None] = None
    description: ClassVar[str] = (
        "an image build context (Containerfile, bundle, lock, delivery plan) for a direct "
        "repository bundle"
    )

    interface: Literal["rest", "mcp"] = field(
        metadata={"help": "the bundle inside the image", "metavar": "rest|mcp"}
    )
    base_image: str = field(
        metadata={"help": "base image pinned by digest (REF@sha256:...)", "metavar": "REF"}
    )
    lock: str = field(
        metadata={"help": "wheel lock: name==version --hash=sha256:HEX per line", "metavar": "LOCK"}
    )
    platform: Literal["linux/amd64", "linux/arm64"] = field(
        default="linux/amd64", metadata={"help": "target platform", "metavar": "OS/ARCH"}
    )
    source_date_epoch: int = field(
        default=0,
        metadata={"help": "time of org.opencontainers.image.created", "metavar": "SECONDS"},
    )

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        from svcc.backends.mcp import McpTarget
        from svcc.backends.rest import RestTarget

        inner = RestTarget() if self.interface == "rest" else McpTarget()
        return self.wrap(bundle_from_tree(inner.emit(ir, ctx)))

    def wrap(self, bundle: BundleInput) -> FileTree:
        """The context for an already generated bundle (what the extension calls)."""
        if not self.base_image:
            raise ImageInputError("base_not_pinned", "--base-image is required (REF@sha256:...)")
        if not self.lock:
            raise ImageInputError("lock_invalid", "--lock is required")
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
            base=base,
            platform=self.platform,
            lock=lock,
            source_date_epoch=self.source_date_epoch,
        )
