"""The ``runtime-image`` target: the build context of the worker image that an
OCI-governed bundle (policy ``svc.execution/v2``) runs its calls in.

The image holds the interpreter (the digest-pinned base), the container worker and the wire
it shares with the server (``svc_runtime/container/worker.py``, ``svc_runtime/wire.py`` and
its strict JSON rules ``svc_runtime/json_text.py``, copied byte for byte from
``svcc.runtime``), the application's declared dependencies installed from hash-checked
wheels when ``--requirements`` names any (a ``name==version --hash=sha256:HEX`` lock; the
user places the wheels in ``wheels/``), and the label ``io.svcc.worker-protocol`` the
generated server checks at startup. It holds no user source: the server bind-mounts the
bundle's source read-only into each container, so one image serves every bundle with the
same dependencies. No engine, no network: the user builds it (``docker build``) and passes
the image's full id to ``--runtime-image``.

Every container runs the worker once, so its start-up is on each call's path: the build
writes hash-checked bytecode (valid whatever the files' times, which a normalised base
image may have changed) for the standard library, the dependencies and the worker.
``io.svcc.worker-sha256`` digests the worker's files (path → digest, canonical JSON).
"""

from typing import ClassVar, Literal

from attrs import field, frozen
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from svcc import __version__
from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends.oci import read_lock
from svcc.backends.templates import render
from svcc.contracts.target import BundleSpec, EmitContext, File, FileTree
from svcc.images.errors import ImageInputError
from svcc.images.lockfile import render_lock
from svcc.images.reference import parse_reference
from svcc.ir.canonical import canonical_json, digest_bytes
from svcc.ir.model import ModuleIR
from svcc.runtime.wire import PROTOCOL_LABEL, WORKER_PROTOCOL

__all__ = ["PROTOCOL_LABEL", "WORKER_PROTOCOL", "RuntimeImageTarget", "worker_files"]


def worker_files() -> dict[str, bytes]:
    """The worker package the image runs: ``svc_runtime/{json_text,wire,container/worker}.py``
    and what building a service class needs (``services``, ``integrity``)."""
    return runtime_files(("integrity", "json_text", "services", "wire")) | runtime_files(
        ("worker",), package="svcc.runtime.container", into="svc_runtime/container"
    )


@frozen
class RuntimeImageTarget:
    name: ClassVar[str] = "runtime-image"
    description: ClassVar[str] = (
        "the worker image build context for governed OCI execution (policy svc.execution/v2)"
    )
    supports_execution_policy: ClassVar[bool] = False
    bundle: ClassVar[BundleSpec | None] = None

    base_image: str | None = field(
        default=None,
        metadata={
            "help": "base image with python3, pinned by digest (REF@sha256:...)",
            "metavar": "REF",
        },
    )
    platform: Literal["linux/amd64", "linux/arm64"] = field(
        default="linux/amd64", metadata={"help": "target platform", "metavar": "OS/ARCH"}
    )
    lock: File | None = field(
        default=None,
        metadata={
            "help": "wheel lock of the declared dependencies: name==version "
            "--hash=sha256:HEX per line (needed with --requirements)",
            "metavar": "LOCK",
        },
    )

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        if not self.base_image:
            raise ImageInputError("base_not_pinned", "--base-image is required (REF@sha256:...)")
        base = parse_reference(self.base_image, what="base image", require_digest=True)
        lock = None
        if ctx.requirements and self.lock is None:
            raise ImageInputError(
                "lock_invalid",
                "the declared dependencies are installed from hash-checked wheels: give --lock",
            )
        if self.lock is not None:
            wheels = read_lock(self.lock).wheels
            locked = {w.name for w in wheels}
            for line in ctx.requirements:
                name = canonicalize_name(Requirement(line).name)
                if name not in locked:
                    raise ImageInputError(
                        "lock_invalid",
                        f"{self.lock.path}: the declared dependency {name} is not locked",
                    )
            lock = render_lock(wheels)
        worker = worker_files()
        labels = {
            PROTOCOL_LABEL: WORKER_PROTOCOL,
            "io.svcc.worker-sha256": digest_bytes(
                canonical_json({path: digest_bytes(data) for path, data in worker.items()})
            ),
            "io.svcc.requirements-sha256": digest_bytes(lock or b""),
        }
        files = {
            "Containerfile": render(
                "svcc.backends.runtime_image",
                "Containerfile.jinja",
                version=__version__,
                base_image=str(base),
                platform=self.platform,
                labels=sorted(labels.items()),
                has_requirements=lock is not None,
            ),
            **worker,
            "target.json": canonical_json(
                {
                    "schema": "svc.runtime-image-context/v1",
                    "base_image": str(base),
                    "platform": self.platform,
                    "labels": labels,
                    "module": ir.module,
                }
            ),
        }
        if lock is not None:
            files["requirements.lock"] = lock
            files["wheels/README.txt"] = (
                b"Place the wheels named in ../requirements.lock here; the build installs them\n"
                b"with --no-index --require-hashes, so a wheel whose hash differs is refused.\n"
            )
        return FileTree.of(files)
