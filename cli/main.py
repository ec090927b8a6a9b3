"""The ``svcc`` / ``svc`` command: argument parsing → the library API → exit code.

Nothing else lives here: the grammar is in ``cli.parser``, rendering in ``cli.render``, logic
in the library API (``compiler.driver``, ``compiler.bundles``). Every failure is one line on
stderr (``svcc: error: ...``) and an exit code from the specification: 0 success, 1
ineligible selection, 2 input/output errors. A traceback reaching a user is a bug:
unexpected exceptions are reported in one line with exit 3 (``SVCC_DEBUG=1`` shows the
traceback).
"""

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from svcc.cli import program
from svcc.cli.parser import SUBCOMMANDS, Parser, build_parser
from svcc.contracts.names import escaped, is_utf8

if TYPE_CHECKING:
    from svcc.contracts.requirements import DeclaredRequirements
    from svcc.contracts.target import Target


def _cmd_expose(args: argparse.Namespace) -> int:
    from svcc.cli import render
    from svcc.cli.expose import ExposeRequest, expose_build
    from svcc.contracts.errors import UsageError

    if (args.directory is None) == (args.git is None):
        raise UsageError("expose build needs either a directory or --git URL --ref COMMIT")
    result = expose_build(
        ExposeRequest(
            interface=args.interface,
            output_dir=args.output_dir,
            operator_policy=args.operator_policy,
            policy=args.policy,
            readiness_policy=args.readiness_policy,
            directory=args.directory,
            git=args.git,
            ref=args.ref,
            subdir=args.subdir,
            python_version=args.python_version,
            requirements=_requirements(args),
        )
    )
    render.compile_result(result, _output_format(args))
    return 0


def _selected_target(argv: Sequence[str]) -> "type[Target] | None":
    """For ``compile``: the class named by ``--target``, so its options can be parsed."""
    pre = Parser(add_help=False)
    pre.add_argument("command", nargs="?")
    pre.add_argument("--target")
    known, _ = pre.parse_known_args(argv)
    if known.command != "compile" or not known.target:
        return None
    from svcc.compiler.registry import load_target_class

    return load_target_class(known.target)


def _text_on_stderr(args: argparse.Namespace) -> bool:
    """Refusals get their source excerpts when a person reads them (or asked for text)."""
    fmt = getattr(args, "format", None)
    return fmt == "text" or (fmt is None and sys.stderr.isatty())


def _output_format(args: argparse.Namespace) -> str:
    """``--format`` as given, else text for a person at a terminal and JSON for a pipe."""
    if args.format is not None:
        return str(args.format)
    return "text" if sys.stdout.isatty() else "json"


def _requirements(args: argparse.Namespace) -> "DeclaredRequirements | None":
    if not args.requirements:
        return None
    from pathlib import Path

    from svcc.contracts.requirements import load_requirements

    return load_requirements(Path(args.requirements))


def _cmd_inspect(args: argparse.Namespace) -> int:
    from svcc.cli import render

    if os.path.isdir(args.path):
        from pathlib import Path

        root = Path(args.path)
        return render.inspect_repository(root, args, _output_format(args), _requirements(args))
    return render.inspect_file(args.path, args, _output_format(args), _requirements(args))


def _cmd_compile(args: argparse.Namespace) -> int:
    from svcc.cli import render
    from svcc.compiler import pipeline
    from svcc.compiler.options import CompileOptions

    options = {
        key.removeprefix("target_option_"): value
        for key, value in vars(args).items()
        if key.startswith("target_option_") and value is not None
    }
    result = pipeline.compile_path(
        args.path,
        target=args.target if args.command == "compile" else args.interface,
        output_dir=args.output_dir,
        options=CompileOptions(
            module_name=args.module_name,
            select=args.select,
            python_version=args.python_version,
            requirements=_requirements(args),
            execution_policy=args.execution_policy,
            target_options=options,
            servable_only=args.command == "generate",
            allow=args.allow,
            data=args.data,
            include_tests=args.include_tests,
            runtime_image=args.runtime_image,
            runtime_platform=args.runtime_platform,
        ),
    )
    render.compile_result(result, _output_format(args))
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from pathlib import Path

    from svcc.cli.serve import prepare, serve

    cache_dir = Path(args.cache_dir) if args.cache_dir else None
    if args.prepare:
        sys.stdout.write(f"{prepare(args.bundle, cache_dir)}\n")
        return 0
    serve(
        args.bundle,
        host=args.host,
        port=args.port,
        cache_dir=cache_dir,
        transport=args.transport,
        allowed_hosts=args.allowed_hosts,
    )
    return 0  # not reached: serve() becomes the server


def _cmd_serve_analysis(args: argparse.Namespace) -> int:
    from pathlib import Path

    from svcc.contracts.errors import UsageError

    if not Path(args.workspace).is_dir():
        raise UsageError(f"--workspace {args.workspace}: not a directory")
    limits = (
        args.workers,
        args.max_upload_bytes,
        args.max_directory_files,
        args.max_analysis_memory,
        args.max_analysis_seconds,
        args.worker_timeout or 1,
        args.read_timeout,
    )
    if min(limits) < 1:
        raise UsageError("--workers and the limits must be positive")
    _check_bind(args.bind)
    from svcc.service.server import serve_analysis

    serve_analysis(
        workspace=args.workspace,
        bind=args.bind,
        workers=args.workers,
        max_upload_bytes=args.max_upload_bytes,
        max_directory_files=args.max_directory_files,
        analysis_memory_bytes=args.max_analysis_memory * 1024 * 1024,
        analysis_seconds=args.max_analysis_seconds,
        worker_timeout=args.worker_timeout,
        read_seconds=args.read_timeout,
    )
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    """The selection of ``compile --select`` judged without writing anything: the
    library's ``analyze`` and ``select`` (exit 1 names the reasons, exit 2 an unknown name)."""
    from svcc.compiler.driver import analyze, select
    from svcc.compiler.options import AnalyzeOptions
    from svcc.contracts.errors import UsageError

    analysis = analyze(
        args.path,
        AnalyzeOptions(
            python_version=args.python_version,
            requirements=_requirements(args),
            strict=False,
            workers=None,
        ),
    )
    chosen: str | tuple[str, ...] | None = args.select
    if chosen is None and analysis.repository is not None:
        chosen = analysis.repository.tree.config.select
    if not chosen:
        raise UsageError(
            f"{escaped(args.path)}: nothing selected: set [tool.svcc] select = [...] in "
            "pyproject.toml, or pass --select NAMES"
        )
    selected = select(analysis, chosen)
    names = ", ".join(cap.id for _, cap in selected)
    sys.stdout.write(f"{program()} check: {len(selected)} selected, all eligible: {names}\n")
    return 0


def _cmd_lsp(args: argparse.Namespace) -> int:
    from svcc.contracts.errors import UsageError

    if args.debounce_ms < 0:
        raise UsageError("--debounce-ms must not be negative")
    try:
        from svcc.lsp.server import serve  # pygls: only this command loads it
    except ImportError as exc:
        raise UsageError(f"svcc lsp needs pygls ({exc}); pip install pygls") from None
    serve(args.debounce_ms / 1000)
    return 0


def _check_bind(bind: str) -> None:
    """``--bind`` read as gunicorn reads it (its own parser): an address another process
    holds is one line and exit 2 before gunicorn starts (gunicorn retried for five seconds,
    logging each try, and exited 1). A Unix socket or a descriptor is gunicorn's."""
    from gunicorn.util import parse_address
    from svcc.cli.serve import check_port_free
    from svcc.contracts.errors import UsageError

    try:
        address = parse_address(bind)
    except (RuntimeError, ValueError) as exc:
        why = str(exc).rstrip(".")
        raise UsageError(f"--bind {bind}: expected HOST:PORT with a port 1-65535 ({why})") from None
    if not isinstance(address, tuple):
        return
    host, port = address
    if not 0 < port < 65536:
        raise UsageError(f"--bind {bind}: expected HOST:PORT with a port 1-65535")
    check_port_free(host or "0.0.0.0", port, "--bind")


def _cmd_targets(args: argparse.Namespace) -> int:
    from svcc.cli import render

    render.targets(args.format)
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    from svcc.cli.cache import command

    return command(args.action, args.cache_dir, getattr(args, "older_than", None), args.format)


def _cmd_explain(args: argparse.Namespace) -> int:
    from svcc.contracts.diagnostics.codes import REGISTRY, markdown_section
    from svcc.contracts.errors import UsageError

    if args.code is None:
        sys.stdout.write("".join(f"{e.code}  {e.title}\n" for e in REGISTRY.values()))
        return 0
    entry = REGISTRY.get(args.code.strip().upper())
    if entry is None:
        raise UsageError(f"{args.code}: no such diagnostic code (svcc explain lists them)")
    sys.stdout.write(markdown_section(entry, anchor=False))
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


def _cmd_plugins(args: argparse.Namespace) -> int:
    from svcc.cli import plugins as plugins_cli

    return plugins_cli.command(args)


def _cmd_lock(args: argparse.Namespace) -> int:
    from svcc.cli import images as images_cli

    return images_cli.lock_command(args)


def _cmd_image(args: argparse.Namespace) -> int:
    from svcc.cli import images as images_cli

    return images_cli.image_command(args)


def _closed_streams_to_null() -> None:
    """A standard stream the shell closed (``svcc inspect DIR >&-``) is ``None`` in Python:
    the first ``isatty()`` or write was an ``AttributeError``, reported as a bug (exit 3).
    It is written to the null device instead, as a reader that went away is (nothing
    written; the command's own exit status)."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (held for the process)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (held for the process)


def _not_utf8(argv: Sequence[str]) -> str | None:
    """The first argument that is not UTF-8 (Python holds its bytes as lone surrogates),
    shown escaped. Paths and names are written to JSON, the IR and manifests:
    ``svcc generate rest x\\xff.py`` wrote its bundle, then failed printing the summary
    (a ``UnicodeEncodeError``, exit 3)."""
    return next((escaped(arg) for arg in argv if not is_utf8(arg)), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _closed_streams_to_null()
    bad = _not_utf8(argv)
    if bad is not None:
        sys.stderr.write(
            f"{program()}: error: {bad}: not UTF-8; rename it (paths are written to JSON)\n"
        )
        return 2
    from svcc.contracts.errors import ExitCode, IneligibleError, SvccError

    try:
        target = _selected_target(argv)
    except SvccError as exc:  # an unknown or broken target: its options cannot be parsed
        sys.stderr.write(f"{program()}: error: {exc}\n")
        return int(exc.exit_code)
    # a command line that starts with a subcommand needs only that one's parser
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    args = build_parser(target, command).parse_args(argv)

    commands = {
        "inspect": _cmd_inspect,
        "compile": _cmd_compile,
        "generate": _cmd_compile,
        "serve": _cmd_serve,
        "serve-analysis": _cmd_serve_analysis,
        "check": _cmd_check,
        "lsp": _cmd_lsp,
        "targets": _cmd_targets,
        "clients": _cmd_clients,
        "cache": _cmd_cache,
        "explain": _cmd_explain,
        "plugins": _cmd_plugins,
        "lock": _cmd_lock,
        "image": _cmd_image,
        "expose": _cmd_expose,
    }
    try:
        return commands[args.command](args)
    except SvccError as exc:
        sys.stderr.write(f"{program()}: error: {exc}\n")
        if isinstance(exc, IneligibleError) and exc.details and _text_on_stderr(args):
            sys.stderr.write("".join(f"  {line}\n" for d in exc.details for line in d.split("\n")))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write(f"{program()}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("SVCC_DEBUG"):
            raise
        sys.stderr.write(
            f"{program()}: internal error: {type(exc).__name__}: {exc} "
            "(a bug: rerun with SVCC_DEBUG=1 and report it)\n"
        )
        return int(ExitCode.INTERNAL)
