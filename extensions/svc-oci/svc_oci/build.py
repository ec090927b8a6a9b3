"""``build``: a service image from a direct repository bundle, on a local engine.

Order matters: the request is validated strictly, the engine endpoint checked, the bundle
validated (never loaded), the lock parsed and resolved against the wheels' own metadata,
then the context (svcc's oci target) is written to a private directory with the locked
wheels staged into it, each hash checked as it is copied. Only then does the engine's own
client run, with a fresh configuration, an explicit ``unix://`` socket and a scrubbed
environment, its output counted against ``max_log_bytes`` and its time against
``timeout_ms``. What the builder reported is checked against the engine's inspection.
"""

import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

from svcc.backends.oci import BASE_PYTHON, OciTarget, check_lock_roots
from svcc.backends.oci.context import LABEL_INPUTS, LABEL_PLAN, USER
from svcc.contracts.target import File
from svcc.images.bundle_input import read_bundle
from svcc.images.errors import ImageInputError
from svcc.images.lockfile import parse_lock
from svcc.images.push_request import PushRequest
from svcc.images.reference import parse_reference
from svcc.images.request import BuildRequest, parse_build_request
from svcc.images.resolve import (
    marker_environment,
    parse_requirement_lines,
    resolve,
    wheel_requires,
)
from svcc.ir.canonical import canonical_json
from svcc.plugins.wheels import locked_wheels

from svc_oci.engine import Engine


def check_engine(request: BuildRequest | PushRequest) -> None:
    socket = Path(request.engine.socket)
    try:
        mode = socket.lstat().st_mode
    except OSError as exc:
        raise ImageInputError("engine_refused", f"engine.socket {socket}: {exc.strerror}") from None
    if not stat.S_ISSOCK(mode):
        raise ImageInputError("engine_refused", f"engine.socket {socket}: not a Unix socket")
    for what, path in (
        ("executable", request.engine.executable),
        ("builder", request.engine.builder),
    ):
        if path is not None and not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ImageInputError("engine_refused", f"engine.{what} {path}: not an executable")


def _tag(request: BuildRequest) -> str:
    """A local tag: ``name:tag`` or a full reference; what the engine stores it as."""
    tag = request.tag
    if tag.count("/") < 2:
        name, _, label = tag.partition(":")
        ok = name and label and all(c.isalnum() or c in "._-/" for c in name + label)
        if not ok or name.lower() != name:
            raise ImageInputError("request_invalid", f"tag {tag!r}: write name:tag")
        return tag
    return str(parse_reference(tag, what="tag", require_tag=True))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(arguments: Any) -> dict[str, Any]:
    request = parse_build_request(arguments)
    tag = _tag(request)
    base = parse_reference(request.base_image, what="base image", require_digest=True)
    check_engine(request)
    bundle = read_bundle(Path(request.bundle))
    if bundle.interface != request.interface:
        raise ImageInputError(
            "bundle_invalid",
            f"the bundle serves {bundle.interface}, the request asks for {request.interface}",
        )
    lock_path = Path(request.requirements)
    try:
        lock_bytes = lock_path.read_bytes()
    except OSError as exc:
        raise ImageInputError("lock_invalid", f"{lock_path}: {exc.strerror}") from None
    lock = parse_lock(lock_bytes, str(lock_path))
    check_lock_roots(bundle, lock, request.platform)
    wheels = locked_wheels(lock.wheels, Path(request.wheelhouse))
    by_name = {w.name: w for w in wheels}
    roots: list[str] = []
    for name in ("requirements.txt", "application-requirements.txt"):
        data = bundle.tree.get(name)
        if data is not None:
            roots += data.decode("utf-8").splitlines()
    resolve(
        lock,
        parse_requirement_lines(roots, "bundle"),
        lambda w: wheel_requires(by_name[w.name].path),
        marker_environment(request.platform, BASE_PYTHON),
    )
    target = OciTarget(
        interface=request.interface,
        base_image=str(base),
        platform=request.platform,  # type: ignore[arg-type]
        lock=File.read(str(lock_path)),
    )
    tree = target.wrap(bundle)
    work = Path(tempfile.mkdtemp(prefix="svc-oci-"))
    try:
        context = work / "context"
        files: dict[str, str] = {}
        for path, data in tree:
            out = context / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files[path] = _digest(data)
        (context / "wheels").mkdir(exist_ok=True)
        for wheel in wheels:
            dest = context / "wheels" / wheel.path.name
            copied = hashlib.sha256()
            with wheel.path.open("rb") as src, dest.open("wb") as dst:
                for block in iter(lambda: src.read(1 << 20), b""):
                    copied.update(block)
                    dst.write(block)
            if copied.hexdigest() != wheel.sha256:
                raise ImageInputError("wheel_invalid", f"{wheel.path.name} changed while copied")
            files[f"wheels/{wheel.path.name}"] = wheel.sha256
        for entry in context.rglob("*"):  # deterministic modes for every engine
            entry.chmod(0o755 if entry.is_dir() else 0o644)
        inputs_sha256 = _digest(canonical_json(dict(sorted(files.items()))))
        target_json = json.loads(tree.get("target.json") or b"{}")
        labels = {**target_json["labels"], LABEL_INPUTS: inputs_sha256}
        engine = Engine(request, work)
        image_id = engine.build(
            context,
            tag=tag,
            labels={LABEL_INPUTS: inputs_sha256},
            source_date_epoch=int(target_json["source_date_epoch"]),
        )
        engine.verify(image_id, tag=tag, platform=request.platform, user=USER, labels=labels)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    plan = json.loads(tree.get("delivery-plan.json") or b"{}")
    delivery_manifest = {
        "schema": "svc.delivery-manifest/v1",
        "image_id": image_id,
        "platform": request.platform,
        "tag": tag,
        "inputs_sha256": inputs_sha256,
        "delivery_plan_sha256": labels[LABEL_PLAN],
        "labels": labels,
        "files": dict(sorted(files.items())),
    }
    return {
        "tag": tag,
        "platform": request.platform,
        "image_id": image_id,
        "inputs_sha256": inputs_sha256,
        "published": False,
        "delivery_plan": plan,
        "delivery_manifest": delivery_manifest,
        "delivery_manifest_digest": "sha256:" + _digest(canonical_json(delivery_manifest)),
    }
