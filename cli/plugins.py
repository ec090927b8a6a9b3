"""``svc plugins fetch|install|list|enable|disable|run``: the argparse side, kept out of cli.py.

``run`` reports every failure of the extension as ``plugin_failed`` (exit 1) followed by the
extension's stable code and its one-line, credential-free message, so a person can act on it;
``--log-file`` keeps the engine's output. Refusals by the core itself (a missing or mismatched
grant, a bad request) are the core's own and keep their code (exit 2).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from svcc.cli import program

MAX_DETAIL: Final = 1000  # the extension bounds its own reasons; this bounds the line


def add_parser(sub: "argparse._SubParsersAction[Any]") -> None:
    plugins = sub.add_parser("plugins", help="install, enable and run extensions (svc-oci)")
    psub = plugins.add_subparsers(dest="plugins_command", required=True)

    def dir_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--plugins-dir",
            metavar="DIR",
            help="where extensions live (default $XDG_DATA_HOME/svcc/plugins)",
        )

    fetch = psub.add_parser(
        "fetch",
        help="build the extension's wheel and lock its dependencies (pip) for install",
    )
    fetch.add_argument("name", choices=("svc-oci",), help="the extension")
    fetch.add_argument("--wheelhouse", required=True, metavar="DIR", help="where wheels are put")
    fetch.add_argument("--output", required=True, metavar="LOCK", help="the dependency lock (new)")
    fetch.add_argument(
        "--source", metavar="DIR", help="the extension's source (default: the checkout's)"
    )
    from svcc.cli.images import _index_options

    _index_options(fetch)
    install = psub.add_parser("install", help="install an extension wheel offline")
    install.add_argument("wheel", help="the extension's wheel")
    install.add_argument("--sha256", required=True, metavar="HEX", help="the wheel's sha256")
    install.add_argument(
        "--requirements", required=True, metavar="LOCK", help="wheel lock of its dependencies"
    )
    install.add_argument(
        "--wheelhouse", required=True, metavar="DIR", help="directory holding the locked wheels"
    )
    dir_option(install)
    listing = psub.add_parser("list", help="installed extensions (JSON)")
    dir_option(listing)
    enable = psub.add_parser("enable", help="activate an installed version")
    enable.add_argument("name", help="the extension (svc-oci)")
    enable.add_argument("--version", required=True, metavar="V", help="the installed version")
    dir_option(enable)
    disable = psub.add_parser("disable", help="deactivate an extension")
    disable.add_argument("name", help="the extension (svc-oci)")
    dir_option(disable)
    run = psub.add_parser("run", help="run one operation of an enabled extension")
    run.add_argument("name", help="the extension (svc-oci)")
    run.add_argument("operation", help="its operation (build or push)")
    run.add_argument("--arguments", required=True, metavar="FILE", help="the request (JSON)")
    run.add_argument(
        "--operator-policy",
        required=True,
        metavar="FILE",
        help="svc.operator-policy/v1 with the operation's grant",
    )
    run.add_argument(
        "--timeout-ms", type=int, default=10_000, metavar="N", help="1 to 600000 (default 10000)"
    )
    run.add_argument(
        "--log-file",
        metavar="PATH",
        help="a new file (0600) for the engine's build or push output, credentials stripped",
    )
    dir_option(run)


def command(args: argparse.Namespace) -> int:
    from svcc.plugins import store

    root = Path(args.plugins_dir) if getattr(args, "plugins_dir", None) else None
    sub = args.plugins_command
    if sub == "fetch":
        from svcc.cli.images import index_args
        from svcc.plugins.fetch import fetch

        fetched = fetch(
            args.name,
            wheelhouse=Path(args.wheelhouse),
            output=Path(args.output),
            source=Path(args.source) if args.source else None,
            index=index_args(args),
        )
        _print(fetched.to_json())
    elif sub == "install":
        done = store.install(
            Path(args.wheel),
            sha256=args.sha256,
            requirements=Path(args.requirements),
            wheelhouse=Path(args.wheelhouse),
            plugins_dir=root,
        )
        _print(done.to_json(enabled=False))
    elif sub == "list":
        active = store.enabled_versions(root)
        _print([p.to_json(active.get(p.name) == p.version) for p in store.installed(root)])
    elif sub == "enable":
        _print(store.enable(args.name, args.version, root).to_json(enabled=True))
    elif sub == "disable":
        store.disable(args.name, root)
        _print({"name": args.name, "enabled": False})
    else:
        from svcc.plugins.invoke import PluginFailure, run

        try:
            outcome = run(
                args.name,
                args.operation,
                arguments=Path(args.arguments),
                operator_policy=Path(args.operator_policy),
                timeout_ms=args.timeout_ms,
                plugins_dir=root,
                log_file=Path(args.log_file) if args.log_file else None,
            )
        except PluginFailure as exc:
            sys.stderr.write(failure_line(exc.code, exc.detail))
            return 1
        _print(outcome.result)
    return 0


def failure_line(code: str, detail: str) -> str:
    """``plugin_failed`` (the specification's word for any failure inside the extension),
    then the extension's stable code and its one-line message."""
    text = " ".join(detail.split())
    if len(text) > MAX_DETAIL:
        text = text[: MAX_DETAIL - 1] + "…"
    return f"{program()}: error: plugin_failed: {code}: {text}\n"


def _print(value: object) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=True) + "\n")
