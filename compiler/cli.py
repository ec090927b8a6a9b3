"""The ``svcc`` / ``svc`` command: argument parsing → ``compiler.driver`` → exit code.

Nothing else lives here: rendering is in ``compiler.render``, logic in the driver. Every
failure is one line on stderr (``svcc: error: ...``) and an exit code from the
specification: 0 success, 1 ineligible selection, 2 input/output errors. A traceback
reaching a user is a bug: unexpected exceptions are reported in one line with exit 3
(``SVCC_DEBUG=1`` shows the traceback).
"""

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from svcc import __version__

if TYPE_CHECKING:
    from svcc.compiler.requirements import DeclaredRequirements


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--module-name", metavar="DOTTED", help="logical module name (default: the file name stem)"
    )
    p.add_argument(
        "--python-version",
        metavar="3.N",
        help="Python grammar to parse with (default: the running interpreter's)",
    )
    p.add_argument(
        "--requirements",
        metavar="FILE",
        help="declared application dependencies (pip requirement lines)",
    )


INTERFACES = ("rest", "mcp")


def _generate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output-dir", required=True, metavar="DIR", help="a new or empty directory")
    p.add_argument("--select", metavar="NAMES", help="comma-separated function names or full ids")
    p.add_argument(
        "--execution-policy",
        metavar="FILE",
        help="governed execution: a svc.execution/v1 policy (JSON; {} means the defaults)",
    )
    _common(p)
    p.add_argument("--format", choices=("json", "text"), default="json")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="svcc", description="Compile Python code into services.")
    parser.add_argument("--version", action="version", version=f"svcc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    inspect = sub.add_parser("inspect", help="report the readiness of each public function")
    inspect.add_argument("path", help="a .py file, an .ipynb notebook, or a directory")
    _common(inspect)
    inspect.add_argument("--format", choices=("text", "json"), default="text")
    inspect.add_argument("--ir", action="store_true", help="print the IR instead")
    inspect.add_argument("--encoding", help="source encoding (default: PEP 263 detection)")

    compile_ = sub.add_parser("compile", help="compile a file with a target into a directory")
    compile_.add_argument("path", help="a .py file or an .ipynb notebook")
    compile_.add_argument("--target", required=True, help="a target name (see `svcc targets`)")
    _generate_options(compile_)

    generate = sub.add_parser(
        "generate", help="write a service bundle (same as compile --target INTERFACE)"
    )
    generate.add_argument("interface", choices=INTERFACES, help="the bundle to write")
    generate.add_argument("path", help="a .py file or an .ipynb notebook")
    _generate_options(generate)

    serve = sub.add_parser(
        "serve", help="run a bundle in its own environment (requirements installed, cached)"
    )
    serve.add_argument("bundle", help="a directory written by `svcc generate`")
    serve.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="default 8000")
    serve.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where environments are kept (default $SVCC_CACHE_DIR or ~/.cache/svcc)",
    )

    analysis = sub.add_parser(
        "serve-analysis", help="run the HTTP analysis service (Falcon under gunicorn)"
    )
    analysis.add_argument(
        "--workspace", default=".", metavar="DIR", help="root of every client path (default .)"
    )
    analysis.add_argument("--bind", default="127.0.0.1:8080", metavar="HOST:PORT")
    analysis.add_argument("--workers", type=int, default=2)
    analysis.add_argument("--max-upload-bytes", type=int, default=16 * 1024 * 1024)
    analysis.add_argument("--max-directory-files", type=int, default=10_000)

    targets = sub.add_parser("targets", help="list the installed targets")
    targets.add_argument("--format", choices=("text", "json"), default="text")
    _clients_parser(sub)
    return parser


CLIENT_FORMATS = ("postman", "bruno", "insomnia", "http")  # svcc.clients.FORMATS, kept lazy


def _clients_parser(sub: "argparse._SubParsersAction[_Parser]") -> None:
    clients = sub.add_parser("clients", help="client collections from a REST bundle")
    actions = clients.add_subparsers(dest="action", required=True, parser_class=_Parser)
    export = actions.add_parser("export", help="write a collection into a new or empty folder")
    export.add_argument("--format", required=True, choices=CLIENT_FORMATS)
    sync = actions.add_parser("sync", help="regenerate an exported folder; never overwrites edits")
    for p in (export, sync):
        p.add_argument(
            "--bundle", required=True, metavar="REST_BUNDLE", help="svcc generate rest output"
        )
        p.add_argument("--output-dir", required=True, metavar="DIR", help="the collection folder")
        p.add_argument(
            "--base-url", metavar="URL", help="http(s) base URL (default http://127.0.0.1:8000)"
        )
        p.add_argument("--name", help="the collection's name (default: the bundle's module)")


def _requirements(args: argparse.Namespace) -> "DeclaredRequirements | None":
    if not args.requirements:
        return None
    from pathlib import Path

    from svcc.compiler.requirements import load_requirements

    return load_requirements(Path(args.requirements))


def _cmd_inspect(args: argparse.Namespace) -> int:
    from pathlib import Path

    from svcc.compiler import render

    path = Path(args.path)
    if path.is_dir():
        if args.module_name:
            from svcc.compiler.errors import UsageError

            raise UsageError("--module-name names one module; it cannot apply to a directory")
        return render.inspect_directory(path, args, _requirements(args))
    return render.inspect_file(path, args, _requirements(args))


def _cmd_compile(args: argparse.Namespace) -> int:
    from svcc.compiler import driver, render

    result = driver.compile_file(
        args.path,
        target=args.target if args.command == "compile" else args.interface,
        output_dir=args.output_dir,
        module_name=args.module_name,
        select=args.select,
        python_version=args.python_version,
        requirements=_requirements(args),
        execution_policy=args.execution_policy,
    )
    render.compile_result(result, args.format)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from pathlib import Path

    from svcc.compiler.serve import serve

    serve(
        args.bundle,
        host=args.host,
        port=args.port,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
    )
    return 0  # not reached: serve() becomes the server


def _cmd_serve_analysis(args: argparse.Namespace) -> int:
    from pathlib import Path

    from svcc.compiler.errors import UsageError

    if not Path(args.workspace).is_dir():
        raise UsageError(f"--workspace {args.workspace}: not a directory")
    if args.workers < 1 or args.max_upload_bytes < 1 or args.max_directory_files < 1:
        raise UsageError("--workers and the limits must be positive")
    from svcc.service.server import serve_analysis

    serve_analysis(
        workspace=args.workspace,
        bind=args.bind,
        workers=args.workers,
        max_upload_bytes=args.max_upload_bytes,
        max_directory_files=args.max_directory_files,
    )
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    from svcc.compiler import render

    render.targets(args.format)
    return 0


def _cmd_clients(args: argparse.Namespace) -> int:
    import json

    from svcc import clients

    if args.action == "export":
        options = clients.ExportOptions(
            format=args.format,
            base_url=clients.DEFAULT_BASE_URL if args.base_url is None else args.base_url,
            name=args.name,
        )
        result = clients.export_collection(args.bundle, args.output_dir, options)
    else:
        result = clients.sync_collection(
            args.output_dir, args.bundle, base_url=args.base_url, name=args.name
        )
    sys.stdout.write(json.dumps(result.to_json()) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from svcc.compiler.errors import ExitCode, SvccError

    commands = {
        "inspect": _cmd_inspect,
        "compile": _cmd_compile,
        "generate": _cmd_compile,
        "serve": _cmd_serve,
        "serve-analysis": _cmd_serve_analysis,
        "targets": _cmd_targets,
        "clients": _cmd_clients,
    }
    try:
        return commands[args.command](args)
    except SvccError as exc:
        sys.stderr.write(f"svcc: error: {exc}\n")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("svcc: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("SVCC_DEBUG"):
            raise
        sys.stderr.write(
            f"svcc: internal error: {type(exc).__name__}: {exc} "
            "(a bug: rerun with SVCC_DEBUG=1 and report it)\n"
        )
        return int(ExitCode.INTERNAL)
