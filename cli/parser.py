"""The command line's grammar: every subcommand's arguments and options (argparse), built
lazily, one subcommand at a time when the command line names it (see ``build_parser``)."""

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from svcc import __version__
from svcc.cli import program

if TYPE_CHECKING:
    from svcc.contracts.target import Target


FORMAT_HELP = "output format (default: text on a terminal, json when piped)"


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil: ``$COLUMNS``, else
    the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, told the width up front: argparse builds one for every option
    it adds, and left to itself each asks ``shutil`` (whose import pulls in the compression
    modules) for the terminal size, on every start of every command."""

    def __init__(self, prog: str, **kwargs: int | None) -> None:
        if kwargs.get("width") is None:
            kwargs["width"] = _terminal_columns() - 2
        super().__init__(prog, **kwargs)  # type: ignore[arg-type]

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """A text of several lines (an epilog of examples and exit codes) keeps its lines,
        each fitted to the width (``help.fit``); a one-line description is wrapped as usual."""
        if "\n" in text:
            from svcc.cli.help import fit

            return "".join(indent + line for line in fit(text, width).splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def format_help(self) -> str:
        from svcc.cli.help import describe

        describe(self)
        return super().format_help()

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
    p.add_argument(
        "--data",
        metavar="PATH",
        action="append",
        default=[],
        help="a data file the module reads at import, bundled beside it (repeatable)",
    )
    p.add_argument(
        "--allow",
        metavar="KIND[,KIND]",
        type=_allow_kinds,
        default=frozenset(),
        help="serve functions with these security effects: env, process, eval, paths",
    )
    p.add_argument(
        "--include-tests",
        action="store_true",
        help="a directory: read test code and tool scripts (tests/, test_*.py, setup.py, "
        "noxfile.py, docs/conf.py) as modules too",
    )


def _allow_kinds(text: str) -> frozenset[str]:
    """``--allow env,process``: the security effect kinds opted into (unknown: exit 2)."""
    from svcc.contracts.security import unknown_kind

    kinds = frozenset(k.strip() for k in text.split(",") if k.strip())
    reason = unknown_kind(kinds)
    if reason is not None:
        raise argparse.ArgumentTypeError(reason)
    return kinds


def _format(p: argparse.ArgumentParser, *more: str) -> None:
    p.add_argument("--format", choices=("text", "json", *more), default=None, help=FORMAT_HELP)


def _generate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output-dir", required=True, metavar="DIR", help="a new or empty directory")
    p.add_argument("--select", metavar="NAMES", help="comma-separated function names or full ids")
    p.add_argument(
        "--execution-policy",
        metavar="FILE",
        help="governed execution: a svc.execution/v1 policy (JSON; {} means the defaults) "
        "or a svc.execution/v2 one (OCI containers)",
    )
    p.add_argument(
        "--runtime-image",
        metavar="ID",
        help="v2 policy: the worker image's full local id (sha256:<64 hex>)",
    )
    p.add_argument(
        "--runtime-platform",
        choices=("linux/amd64", "linux/arm64"),
        metavar="OS/ARCH",
        help="v2 policy: the worker image's platform (linux/amd64 or linux/arm64)",
    )
    _common(p)
    _format(p)


def _target_options(p: argparse.ArgumentParser, target: "type[Target]") -> None:
    """The selected target's own options (its attrs fields), in their own help group."""
    from svcc.compiler.registry import target_options

    group = p.add_argument_group(f"options of target {target.name!r}")
    for option in target_options(target):
        kwargs: dict[str, object] = {"dest": f"target_option_{option.name}"}
        if option.kind == "bool":
            kwargs |= {"action": argparse.BooleanOptionalAction, "default": option.default}
        else:
            kwargs |= {
                "type": int if option.kind == "int" else str,
                "choices": option.choices,
                "metavar": option.metavar,
                "default": option.default,
                "required": option.required,
            }
        shown = f" (one of: {', '.join(option.choices)})" if option.choices else ""
        if not option.required and option.default is not None:
            shown += " (default: %(default)s)"
        group.add_argument(option.flag, help=option.help + shown, **kwargs)  # type: ignore[arg-type]


def build_parser(
    target: "type[Target] | None" = None, command: str | None = None
) -> argparse.ArgumentParser:
    """The whole command line; ``target`` is the class ``compile --target`` selected, whose
    options are added to ``compile``. With ``command``, only that subcommand is built: what
    ``main`` parses when the command line starts with it (argparse builds every option of
    every subcommand eagerly, a few milliseconds of each start)."""
    parser = Parser(prog=program(), description="Compile Python code into services.")
    parser.add_argument(
        "--version", action="version", version=f"svcc {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, add in SUBCOMMANDS.items():
        if command is None or command == name:
            add(sub, target)
    return parser


_Sub: TypeAlias = "argparse._SubParsersAction[Parser]"
# adds one subcommand (given the class `compile --target` selected)
_AddParser: TypeAlias = "Callable[[_Sub, type[Target] | None], None]"


def _inspect_parser(sub: _Sub, _: "type[Target] | None") -> None:
    inspect = sub.add_parser("inspect", help="report the readiness of each public function")
    inspect.add_argument("path", help="a .py file, an .ipynb notebook, or a directory")
    _common(inspect)
    _format(inspect, "sarif")  # SARIF 2.1.0 for code scanning (cli/sarif.py)
    inspect.add_argument("--ir", action="store_true", help="print the IR instead")
    inspect.add_argument(
        "--encoding", metavar="NAME", help="source encoding (default: PEP 263 detection)"
    )


def _compile_parser(sub: _Sub, target: "type[Target] | None") -> None:
    compile_ = sub.add_parser("compile", help="compile a file with a target into a directory")
    compile_.add_argument("path", help="a .py file, an .ipynb notebook or a directory")
    compile_.add_argument(
        "--target",
        required=True,
        metavar="NAME",
        help="a target name (`svcc targets` lists them and their options)",
    )
    _generate_options(compile_)
    if target is not None:
        _target_options(compile_, target)


def _generate_parser(sub: _Sub, _: "type[Target] | None") -> None:
    generate = sub.add_parser(
        "generate", help="write a service bundle (same as compile --target INTERFACE)"
    )
    generate.add_argument(
        "interface", metavar="INTERFACE", help="a target that writes a service: rest, mcp, ..."
    )
    generate.add_argument("path", help="a .py file, an .ipynb notebook or a directory")
    _generate_options(generate)


def _serve_parser(sub: _Sub, _: "type[Target] | None") -> None:
    serve = sub.add_parser(
        "serve", help="run a bundle in its own environment (requirements installed, cached)"
    )
    serve.add_argument("bundle", help="a directory written by `svcc generate`")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument(
        "--transport",
        choices=("stdio", "streamable-http"),
        help="MCP bundles: stdio (default) or streamable HTTP at /mcp on --host/--port",
    )
    serve.add_argument(
        "--allowed-hosts",
        metavar="NAMES",
        help="MCP over HTTP: Host header values to accept besides loopback (comma-separated)",
    )
    serve.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where environments are kept (default $SVCC_CACHE_DIR or ~/.cache/svcc)",
    )
    serve.add_argument(
        "--prepare",
        action="store_true",
        help="build the bundle's environment (pip's progress on stderr), print it and exit",
    )


def _serve_analysis_parser(sub: _Sub, _: "type[Target] | None") -> None:
    analysis = sub.add_parser(
        "serve-analysis", help="run the HTTP analysis service (Falcon under gunicorn)"
    )
    analysis.add_argument(
        "--workspace", default=".", metavar="DIR", help="root of every client path (default .)"
    )
    analysis.add_argument(
        "--bind",
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="address to listen on (default %(default)s)",
    )
    analysis.add_argument(
        "--workers", type=int, default=2, help="gunicorn worker processes (default %(default)s)"
    )
    analysis.add_argument(
        "--max-upload-bytes",
        type=int,
        default=16 * 1024 * 1024,
        metavar="N",
        help="largest request body accepted (default %(default)s)",
    )
    analysis.add_argument(
        "--max-directory-files",
        type=int,
        default=10_000,
        metavar="N",
        help="most files one directory analysis reads (default %(default)s)",
    )
    analysis.add_argument(
        "--max-analysis-memory",
        type=int,
        default=1024,
        metavar="MIB",
        help="memory one request's analysis may add, in MiB (default 1024; over it: 422)",
    )
    analysis.add_argument(
        "--max-analysis-seconds",
        type=int,
        default=60,
        metavar="S",
        help="CPU seconds one request's analysis may take, wall clock twice that (default 60)",
    )
    analysis.add_argument(
        "--worker-timeout",
        type=int,
        metavar="S",
        help="gunicorn's worker timeout (default: twice the analysis seconds + 30; 503)",
    )
    analysis.add_argument(
        "--read-timeout",
        type=int,
        default=10,
        metavar="S",
        help="seconds a client may pause while sending its request; the whole body must "
        "arrive within six times that (default 10; over it: 408, the worker is freed)",
    )


def _check_parser(sub: _Sub, _: "type[Target] | None") -> None:
    check = sub.add_parser(
        "check",
        help="exit 1 when a selected function is not eligible (for pre-commit and CI)",
    )
    check.add_argument(
        "path", nargs="?", default=".", help="a project directory (default .), or one file"
    )
    check.add_argument(
        "--select",
        metavar="NAMES",
        help="comma-separated functions (default: [tool.svcc] select of the project)",
    )
    check.add_argument(
        "--python-version", metavar="3.N", help="Python grammar to parse with (default: running)"
    )
    check.add_argument(
        "--requirements", metavar="FILE", help="declared dependencies (replaces pyproject's)"
    )


def _lsp_parser(sub: _Sub, _: "type[Target] | None") -> None:
    lsp = sub.add_parser(
        "lsp", help="run the language server on stdio (readiness diagnostics in editors)"
    )
    lsp.add_argument(
        "--debounce-ms",
        type=int,
        default=100,
        metavar="MS",
        help="quiet time after an edit before the document is analysed (default %(default)s)",
    )


def _plugins_parser(sub: _Sub, _: "type[Target] | None") -> None:
    from svcc.cli import plugins as plugins_cli

    plugins_cli.add_parser(sub)


def _lock_parser(sub: _Sub, _: "type[Target] | None") -> None:
    from svcc.cli import images as images_cli

    images_cli.add_lock_parser(sub)


def _image_parser(sub: _Sub, _: "type[Target] | None") -> None:
    from svcc.cli import images as images_cli

    images_cli.add_image_parser(sub)


def _targets_parser(sub: _Sub, _: "type[Target] | None") -> None:
    targets = sub.add_parser("targets", help="list the installed targets and their options")
    targets.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default text)"
    )


CLIENT_FORMATS = ("postman", "bruno", "insomnia", "http")  # svcc.clients.FORMATS, kept lazy


def _clients_parser(sub: _Sub, _: "type[Target] | None") -> None:
    clients = sub.add_parser("clients", help="client collections from a REST bundle")
    actions = clients.add_subparsers(
        dest="action", metavar="{export,sync}", required=True, parser_class=Parser
    )
    export = actions.add_parser("export", help="write a collection into a new or empty folder")
    export.add_argument(
        "--format", required=True, choices=CLIENT_FORMATS, help="the collection format"
    )
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


def _expose_parser(sub: _Sub, _: "type[Target] | None") -> None:
    expose = sub.add_parser(
        "expose", help="repository bundles under operator and exposure policies"
    )
    actions = expose.add_subparsers(dest="action", required=True, parser_class=Parser)
    build = actions.add_parser("build", help="build a direct service bundle from a repository")
    build.add_argument(
        "interface", metavar="INTERFACE", help="the bundle to build: a servable target (rest, mcp)"
    )
    build.add_argument("directory", nargs="?", help="a local tree (or give --git and --ref)")
    build.add_argument("--git", metavar="URL", help="an https:// repository")
    build.add_argument("--ref", metavar="COMMIT", help="the full 40-hex commit to build")
    build.add_argument("--subdir", default=".", metavar="DIR", help="folder of the project (.)")
    build.add_argument(
        "--operator-policy",
        required=True,
        metavar="FILE",
        help="svc.operator-policy/v1: the git.fetch grant (docs/policies.md)",
    )
    build.add_argument("--policy", required=True, metavar="FILE", help="the exposure policy")
    build.add_argument(
        "--readiness-policy",
        required=True,
        metavar="FILE",
        help="svc.readiness-policy/v1: must allow direct execution",
    )
    build.add_argument(
        "--output-dir", required=True, metavar="DIR", help="a new or empty directory"
    )
    build.add_argument(
        "--python-version", metavar="3.N", help="Python grammar to parse with (default: running)"
    )
    build.add_argument(
        "--requirements", metavar="FILE", help="declared dependencies (replaces pyproject's)"
    )
    build.add_argument(
        "--format", choices=("json", "text"), help="output format (default: text on a terminal)"
    )


def _cache_parser(sub: _Sub, _: "type[Target] | None") -> None:
    cache = sub.add_parser("cache", help="list and prune the environments svcc serve keeps")
    actions = cache.add_subparsers(dest="action", required=True, parser_class=Parser)
    listing = actions.add_parser("list", help="each environment, its size and last use")
    prune = actions.add_parser("prune", help="remove environments no bundle used lately")
    prune.add_argument(
        "--older-than",
        type=float,
        metavar="DAYS",
        help="only those unused for DAYS days (default: every environment)",
    )
    for p in (listing, prune):
        p.add_argument(
            "--cache-dir",
            metavar="DIR",
            help="the cache (default $SVCC_CACHE_DIR or ~/.cache/svcc)",
        )
        p.add_argument(
            "--format", choices=("text", "json"), default="text", help="output format (text)"
        )


def _explain_parser(sub: _Sub, _: "type[Target] | None") -> None:
    explain = sub.add_parser("explain", help="print what a diagnostic code means and how to fix it")
    explain.add_argument("code", nargs="?", help="a code such as SVC-R007 (any case)")


# Every subcommand, in the order ``svcc --help`` lists them.
SUBCOMMANDS: dict[str, _AddParser] = {
    "inspect": _inspect_parser,
    "compile": _compile_parser,
    "generate": _generate_parser,
    "serve": _serve_parser,
    "serve-analysis": _serve_analysis_parser,
    "check": _check_parser,
    "lsp": _lsp_parser,
    "plugins": _plugins_parser,
    "lock": _lock_parser,
    "image": _image_parser,
    "expose": _expose_parser,
    "targets": _targets_parser,
    "clients": _clients_parser,
    "cache": _cache_parser,
    "explain": _explain_parser,
}
