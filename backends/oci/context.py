"""The build context of an image: Containerfile, bundle, lock, delivery plan, target.json.

Pure: a validated bundle and the options in, a ``FileTree`` out, the same bytes for the same
inputs. The wheels are not part of it: whoever builds (the svc-oci extension, or a person
with ``docker build``) stages the locked wheels into ``wheels/``, checking each hash.
"""

import json
from datetime import UTC, datetime
from typing import Any, Final

from svcc import __version__
from svcc.backends._common.bundle import pretty_json
from svcc.backends.templates import render
from svcc.contracts.target import BundleSpec, FileTree
from svcc.images.bundle_input import BundleInput
from svcc.images.lockfile import WheelLock, render_lock
from svcc.images.reference import ImageReference
from svcc.ir.canonical import canonical_json, digest_bytes

USER: Final = "65532:65532"
PORT: Final = 8000
PYTHON: Final = "/opt/svc/venv/bin/python"
LABEL_INPUTS: Final = "io.svcc.inputs-sha256"
LABEL_PLAN: Final = "io.svcc.delivery-plan-sha256"


def command(served: BundleSpec) -> list[str]:
    """How the image runs the bundle: its declared image command, on every interface and
    the image's port (a bundle that does not listen speaks on stdin/stdout)."""
    return served.image_command(PYTHON, "0.0.0.0", PORT)  # every interface inside the image


def created(source_date_epoch: int) -> str:
    return datetime.fromtimestamp(source_date_epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def delivery_plan(
    bundle: BundleInput, served: BundleSpec, base: ImageReference, platform: str, lock: WheelLock
) -> dict[str, Any]:
    """What the image will be, decided before any engine runs; its digest is a label."""
    manifest_bytes = bundle.tree.get(bundle.manifest_name)
    assert manifest_bytes is not None
    return {
        "schema": "svc.delivery-plan/v1",
        "interface": bundle.interface,
        "platform": platform,
        "base_image": str(base),
        "bundle": {
            "manifest": bundle.manifest_name,
            "manifest_digest": digest_bytes(manifest_bytes),
            "capabilities": list(bundle.manifest.get("capabilities", [])),
            "provenance": bundle.manifest.get("provenance"),
            **_data_files(bundle),
        },
        "wheels": [
            {"name": w.name, "version": w.version, "sha256": w.sha256}
            for w in sorted(lock.wheels, key=lambda w: w.name)
        ],
        "run": {
            "user": USER,
            "workdir": "/opt/svc/bundle",
            "command": command(served),
            "port": PORT if served.listens_in_image else None,
            "stdio": not served.listens_in_image,
        },
    }


def _data_files(bundle: BundleInput) -> dict[str, Any]:
    """The bundle's declared data files (``[tool.svcc] data-files``), by digest: inputs of
    the image like the sources (the bundle check read and hashed them), named in the plan so
    a reviewer sees that the model the image loads is the one declared."""
    repository = bundle.manifest.get("repository")
    data = repository.get("data_files") if isinstance(repository, dict) else None
    if not isinstance(data, dict) or not data:
        return {}
    files = bundle.manifest["files"]
    return {"data_files": {path: files[path] for path in sorted(data)}}


def labels(
    bundle: BundleInput, served: BundleSpec, plan_digest: str, source_date_epoch: int
) -> dict[str, str]:
    """DESIGN §9: enough for a registry to say what an image serves without pulling it.
    The inputs label depends on the staged wheels and is added by the builder."""
    tree = bundle.tree
    document = served.interface_document
    interface_doc = (tree.get(document) if document else None) or b""
    readiness = tree.get("readiness.json") or b""
    provenance = bundle.manifest.get("provenance") or {}
    out = {
        LABEL_PLAN: plan_digest.removeprefix("sha256:"),
        "io.svcc.readiness-sha256": digest_bytes(readiness).removeprefix("sha256:"),
        "io.svcc.interface-sha256": digest_bytes(interface_doc).removeprefix("sha256:"),
        "io.svcc.interface": bundle.interface,
        "org.opencontainers.image.created": created(source_date_epoch),
        "org.opencontainers.image.version": str(
            bundle.manifest.get("generator", {}).get("version", __version__)
        ),
    }
    if isinstance(provenance, dict):
        if provenance.get("commit"):
            out["org.opencontainers.image.revision"] = str(provenance["commit"])
        if provenance.get("url"):
            out["org.opencontainers.image.source"] = str(provenance["url"])
    return dict(sorted(out.items()))


def build_context(
    bundle: BundleInput,
    served: BundleSpec,
    *,
    base: ImageReference,
    platform: str,
    lock: WheelLock,
    source_date_epoch: int = 0,
) -> FileTree:
    plan = delivery_plan(bundle, served, base, platform, lock)
    plan_bytes = pretty_json(plan)
    plan_digest = digest_bytes(plan_bytes)
    label_map = labels(bundle, served, plan_digest, source_date_epoch)
    containerfile = render(
        __name__.rsplit(".", 1)[0],
        "Containerfile.jinja",
        version=__version__,
        base_image=str(base),
        platform=platform,
        command=json.dumps(command(served)),
        port=PORT if served.listens_in_image else None,
        labels=[(k, json.dumps(v)) for k, v in label_map.items()],
    )
    target = {
        "schema": "svc.oci-target/v1",
        "interface": bundle.interface,
        "platform": platform,
        "base_image": str(base),
        "source_date_epoch": source_date_epoch,
        "labels": label_map,
        "delivery_plan_digest": plan_digest,
        "lock_sha256": digest_bytes(render_lock(lock.wheels)),
    }
    files = {f"bundle/{path}": data for path, data in bundle.tree}
    files |= {
        "Containerfile": containerfile,
        "requirements.lock": render_lock(lock.wheels),
        "delivery-plan.json": plan_bytes,
        "target.json": canonical_json(target),
    }
    return FileTree.of(files)
