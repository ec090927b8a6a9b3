"""``svcc lock`` and ``svcc image plan``: the argparse side, kept out of cli.py.

Both prepare inputs of ``svc plugins run svc-oci build|push``; neither runs an engine.
``lock`` is the one step of the image path that uses the package index (through pip and its
configuration); build and push stay offline.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

INDEX_HELP = "passed to pip (repeatable): where wheels come from besides its configured index"


def _servable() -> tuple[str, ...]:
    """The interfaces an image can serve: every servable target the registry knows."""
    from svcc.compiler.registry import servable_targets

    return tuple(sorted(servable_targets()))


def _index_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--find-links", action="append", default=[], metavar="DIR|URL", help=INDEX_HELP)
    p.add_argument("--index-url", metavar="URL", help="pip's --index-url")
    p.add_argument("--no-index", action="store_true", help="pip's --no-index (only --find-links)")


def index_args(args: argparse.Namespace) -> tuple[str, ...]:
    out: list[str] = []
    for link in args.find_links:
        out += ["--find-links", str(Path(link).absolute()) if Path(link).exists() else link]
    if args.index_url:
        out += ["--index-url", args.index_url]
    if args.no_index:
        out.append("--no-index")
    return tuple(out)


def add_lock_parser(sub: "argparse._SubParsersAction[Any]") -> None:
    from svcc.compiler.registry import default_servable

    lock = sub.add_parser(
        "lock",
        help="resolve a bundle's or repository's wheels for an image (pip) into a wheel lock",
    )
    lock.add_argument("path", metavar="BUNDLE_OR_REPO", help="a repository bundle or a repository")
    lock.add_argument(
        "--platform", required=True, choices=("linux/amd64", "linux/arm64"), help="the base's"
    )
    lock.add_argument("--python", required=True, metavar="3.N", help="the base's CPython")
    lock.add_argument(
        "--glibc", default="2.36", metavar="2.N", help="the base's glibc (default 2.36: Debian 12)"
    )
    lock.add_argument("--wheelhouse", required=True, metavar="DIR", help="where wheels are put")
    lock.add_argument("--output", required=True, metavar="LOCK", help="the lock file (new)")
    default = default_servable()
    lock.add_argument(
        "--interface",
        default=default,
        choices=_servable(),
        help=f"a repository's server: any servable target (default {default})",
    )
    lock.add_argument(
        "--requirements",
        metavar="FILE",
        help="a repository's declared dependencies (replaces pyproject's)",
    )
    lock.add_argument(
        "--pins",
        metavar="FILE",
        help="uv.lock, pylock.toml or a hashed requirements file whose pins to keep "
        "(default: the repository's own; a bundle has none)",
    )
    _index_options(lock)


def lock_command(args: argparse.Namespace) -> int:
    from svcc.images.lockfile import render_lock
    from svcc.images.locking import check_new, check_target, lock_wheels, read_roots, write_new

    check_target(args.platform, args.python, args.glibc)
    roots = read_roots(
        Path(args.path),
        args.interface,
        Path(args.requirements) if args.requirements else None,
        Path(args.pins) if args.pins else None,
    )
    output = Path(args.output)
    check_new(output)
    locked = lock_wheels(
        roots,
        platform=args.platform,
        python=args.python,
        glibc=args.glibc,
        wheelhouse=Path(args.wheelhouse),
        index=index_args(args),
    )
    write_new(output, render_lock(locked.wheels))
    pins = roots.pins
    kept = (
        f"; kept {len(locked.kept_pins)} pin(s) from {pins.source}: {', '.join(locked.kept_pins)}"
        if pins is not None
        else ""
    )
    sys.stdout.write(
        f"locked {len(locked.wheels)} wheels of {roots.origin} for {args.platform} CPython "
        f"{args.python} into {output} (wheels in {args.wheelhouse}){kept}\n"
    )
    return 0


def add_image_parser(sub: "argparse._SubParsersAction[Any]") -> None:
    image = sub.add_parser("image", help="prepare image builds and pushes (request files)")
    actions = image.add_subparsers(dest="image_command", required=True)
    plan = actions.add_parser(
        "plan",
        help="write build.json, push.json and a proposed operator policy for review",
    )
    plan.add_argument(
        "path", metavar="BUNDLE_OR_REPO", help="a direct repository bundle or a repository"
    )
    plan.add_argument(
        "--interface", required=True, choices=_servable(), help="what the image serves"
    )
    plan.add_argument("--select", metavar="NAMES", help="a repository's capabilities (as compile)")
    plan.add_argument(
        "--base-image", required=True, metavar="REF@sha256:HEX", help="the base, by digest"
    )
    plan.add_argument(
        "--platform", required=True, choices=("linux/amd64", "linux/arm64"), help="the image's"
    )
    plan.add_argument("--tag", required=True, metavar="NAME:TAG", help="the local image tag")
    plan.add_argument(
        "--destination", required=True, metavar="REGISTRY/NS/IMAGE:TAG", help="where push publishes"
    )
    plan.add_argument("--lock", required=True, metavar="LOCK", help="from svcc lock")
    plan.add_argument("--wheelhouse", required=True, metavar="DIR", help="from svcc lock")
    plan.add_argument(
        "--engine-executable", required=True, metavar="PATH", help="e.g. /usr/bin/docker"
    )
    plan.add_argument(
        "--engine-socket", required=True, metavar="PATH", help="the engine's Unix socket"
    )
    plan.add_argument(
        "--engine-builder", metavar="PATH", help="the buildx plugin (default: the system builder)"
    )
    plan.add_argument(
        "--credentials", required=True, metavar="FILE", help="the registry credentials file"
    )
    plan.add_argument("--ca-file", metavar="PEM", help="a CA added for the registry")
    plan.add_argument(
        "--build-result", metavar="FILE", help="the build's result: push.json is written"
    )
    plan.add_argument(
        "--build-timeout-ms", type=int, default=480_000, metavar="N", help="build.json timeout_ms"
    )
    plan.add_argument(
        "--push-timeout-ms", type=int, default=300_000, metavar="N", help="push.json timeout_ms"
    )
    plan.add_argument("--plugins-dir", metavar="DIR", help="where svc-oci is installed and enabled")
    plan.add_argument("--output-dir", required=True, metavar="DIR", help="where the files go")


def image_command(args: argparse.Namespace) -> int:
    from svcc.images.errors import ImageInputError
    from svcc.images.locking import is_bundle
    from svcc.images.plan import PlanInputs, write_plan
    from svcc.images.request import PluginIdentity
    from svcc.plugins.store import active

    output_dir = Path(args.output_dir)
    bundle = Path(args.path)
    if not is_bundle(bundle):
        from svcc.compiler.options import CompileOptions
        from svcc.compiler.pipeline import compile_path

        bundle = output_dir / f"bundle-{args.interface}"
        if not is_bundle(bundle):
            compile_path(
                Path(args.path),
                target=args.interface,
                output_dir=bundle,
                options=CompileOptions(select=args.select, servable_only=True),
            )
    plugin = active("svc-oci", Path(args.plugins_dir) if args.plugins_dir else None)
    build_result = None
    if args.build_result:
        try:
            build_result = json.loads(Path(args.build_result).read_text())
        except (OSError, ValueError) as exc:
            raise ImageInputError("request_invalid", f"--build-result: {exc}") from None
        if not isinstance(build_result, dict):
            raise ImageInputError("request_invalid", "--build-result: not a JSON object")
    inputs = PlanInputs(
        bundle=bundle,
        interface=args.interface,
        base_image=args.base_image,
        platform=args.platform,
        tag=args.tag,
        destination=args.destination,
        lock=Path(args.lock),
        wheelhouse=Path(args.wheelhouse),
        engine_executable=args.engine_executable,
        engine_socket=args.engine_socket,
        engine_builder=args.engine_builder,
        credentials=Path(args.credentials),
        ca_file=Path(args.ca_file) if args.ca_file else None,
        build_timeout_ms=args.build_timeout_ms,
        push_timeout_ms=args.push_timeout_ms,
    )
    identity = PluginIdentity(
        name=plugin.name,
        version=plugin.version,
        sha256=plugin.sha256,
        lock_sha256=plugin.lock_sha256,
    )
    written = write_plan(inputs, identity, output_dir, build_result)
    sys.stdout.write(json.dumps(written, indent=2, sort_keys=True) + "\n")
    return 0
