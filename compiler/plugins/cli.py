"""``svc plugins install|list|enable|disable|run``: the argparse side, kept out of cli.py.

``run`` redacts every failure of the extension to ``plugin_failed`` on the command line (the
Python API, ``invoke.run``, keeps the code and detail); refusals by the core itself (a
missing or mismatched grant, a bad request) are the core's own and keep their code.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: "argparse._SubParsersAction[Any]") -> None:
    plugins = sub.add_parser("plugins", help="install, enable and run extensions (svc-oci)")
    psub = plugins.add_subparsers(dest="plugins_command", required=True)

    def dir_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--plugins-dir",
            metavar="DIR",
            help="where extensions live (default $XDG_DATA_HOME/svcc/plugins)",
        )

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
    dir_option(run)


def command(args: argparse.Namespace) -> int:
    from svcc.compiler.plugins import store

    root = Path(args.plugins_dir) if args.plugins_dir else None
    sub = args.plugins_command
    if sub == "install":
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
        from svcc.compiler.plugins.invoke import PluginFailure, run

        try:
            outcome = run(
                args.name,
                args.operation,
                arguments=Path(args.arguments),
                operator_policy=Path(args.operator_policy),
                timeout_ms=args.timeout_ms,
                plugins_dir=root,
            )
        except PluginFailure:
            sys.stderr.write("svcc: error: plugin_failed\n")
            return 1
        _print(outcome.result)
    return 0


def _print(value: object) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=True) + "\n")
