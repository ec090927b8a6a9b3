"""What ``--help`` says beyond the options: each command's description, an example and its exit
codes, in one table. The parser reads it when it prints help (``main._Parser.format_help``);
``docs/reference/cli.md`` is generated from that help (``tools/gen_cli_reference.py``), so the
manual's reference and the terminal's help are one text."""

import argparse

# Every command's exit codes, as the specification numbers them (contracts.errors.ExitCode).
TOP_EPILOG = """\
exit codes:
  0  success
  1  a selected function is not eligible (each reason's code and line are named), or an \
extension failed (plugin_failed)
  2  an input or output problem: a missing file, an unsupported format, a syntax error, a \
refused output directory, an unknown selection, target or code
  3  an internal error (a bug: rerun with SVCC_DEBUG=1 and report it)
  4  a generated server refused to start (its bundle does not match its manifest)

inspect, compile and generate print text on a terminal and JSON when piped (--format \
chooses). Errors are one line on stderr, with file:line where there is one. \
`svcc explain CODE` says what a diagnostic code means; the manual is in docs/.

example:
  svcc inspect examples/shapes.py
  svcc generate rest examples/shapes.py --output-dir build/shapes-rest
  svcc serve build/shapes-rest"""

# command path -> (description, examples, exit codes)
COMMANDS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "inspect": (
        "Report the readiness of every public module-level function of a file, a notebook or "
        "a directory, without running it: eligible, conditional, ambiguous or unsupported, "
        "with each reason's code, line and fix hint.",
        ("svcc inspect examples/shapes.py", "svcc inspect myproject/ --format json"),
        "0 reported (whatever the verdicts), 2 input problem (a file could not be analysed)",
    ),
    "compile": (
        "Compile a file, a notebook or a repository with a target into a new or empty "
        "directory. Without --select every function must be eligible. A target's own options "
        "follow --target NAME (`svcc compile --target NAME --help` lists them).",
        (
            "svcc compile examples/shapes.py --target rest --output-dir build/shapes-rest",
            "svcc compile app.py --target mcp --select area,perimeter --output-dir build/mcp",
        ),
        "0 written, 1 a selected function is not eligible, 2 input or output problem",
    ),
    "generate": (
        "Write a service bundle: the specification's name for compile --target INTERFACE "
        "(the same code path, the same bytes).",
        ("svcc generate rest examples/shapes.py --output-dir build/shapes-rest",),
        "0 written, 1 a selected function is not eligible, 2 input or output problem",
    ),
    "serve": (
        "Run a bundle: its requirements are installed once into a cached environment outside "
        "the bundle, then the server runs from the bundle directory (REST: uvicorn; MCP: "
        "stdio, or streamable HTTP with --transport).",
        (
            "svcc serve build/shapes-rest --port 8000",
            "svcc serve build/shapes-mcp --prepare",
            "svcc serve build/shapes-mcp --transport streamable-http --port 8000",
        ),
        "the server's own; 0 prepared (--prepare), 2 not a bundle, the port is taken or the "
        "install failed, 4 the server refused to start",
    ),
    "serve-analysis": (
        "Run the HTTP analysis service for IDEs and tools (Falcon under gunicorn): the "
        "compiler's passes over HTTP, every client path inside --workspace.",
        ("svcc serve-analysis --workspace . --bind 127.0.0.1:8080",),
        "the server's own; 2 a bad option or the address is taken",
    ),
    "check": (
        "Check that the selected functions of a project (its [tool.svcc] select, or --select) "
        "are eligible: for pre-commit hooks and CI.",
        ("svcc check", "svcc check examples/shop --select shop.pricing.total"),
        "0 every selected function is eligible, 1 one is not (named with its reasons), "
        "2 an input problem (an unknown name, nothing selected)",
    ),
    "lsp": (
        "Run the language server on stdin/stdout: readiness diagnostics as you type, each "
        "code linked to its page of the manual (docs/editors.md).",
        ("svcc lsp", "svcc lsp --debounce-ms 250"),
        "0 the editor closed the session",
    ),
    "plugins": ("Install, enable and run extensions (svc-oci builds and pushes images).", (), ""),
    "plugins fetch": (
        "Build an extension's wheel and svcc's own, and resolve their dependencies for this "
        "machine's Python into a wheelhouse; prints the install command.",
        ("svcc plugins fetch svc-oci --wheelhouse plugin-wheels --output plugin.lock",),
        "0 fetched, 2 a bad request or the build failed",
    ),
    "plugins install": (
        "Install an extension wheel offline, checked against its sha256.",
        (
            "svcc plugins install plugin-wheels/svc_oci-0.4.1-py3-none-any.whl --sha256 HEX "
            "--requirements plugin.lock --wheelhouse plugin-wheels",
        ),
        "0 installed, 2 a bad wheel, digest or lock",
    ),
    "plugins list": (
        "The installed extensions, their versions and which is enabled (JSON).",
        ("svcc plugins list",),
        "0 listed",
    ),
    "plugins enable": (
        "Activate an installed version of an extension.",
        ("svcc plugins enable svc-oci --version 0.4.1",),
        "0 enabled, 2 no such version",
    ),
    "plugins disable": (
        "Deactivate an extension (its versions stay installed).",
        ("svcc plugins disable svc-oci",),
        "0 disabled, 2 not installed",
    ),
    "plugins run": (
        "Run one operation of an enabled extension under an operator policy's grants.",
        (
            "svcc plugins run svc-oci build --arguments plan/build.json "
            "--operator-policy policy.json --timeout-ms 600000 > build-result.json",
        ),
        "0 done (the result on stdout), 1 the extension failed (plugin_failed: CODE), "
        "2 a bad request or a missing grant",
    ),
    "lock": (
        "Resolve a bundle's or a repository's server and application requirements into "
        "binary wheels for the image's platform, and write the hash-pinned lock.",
        (
            "svcc lock bundle --platform linux/amd64 --python 3.11 --wheelhouse wheels "
            "--output server.lock",
        ),
        "0 written, 2 a requirement cannot be met (lock_mismatch) or a bad input",
    ),
    "image": ("Prepare image builds and pushes: the request files the extension runs.", (), ""),
    "image plan": (
        "Write build.json (and push.json with --build-result) and the operator policy the "
        "requests need, as a proposal for an operator to review.",
        (
            "svcc image plan bundle --interface rest --base-image REG/ns/base@sha256:HEX "
            "--platform linux/amd64 --tag shop:1.0 --destination registry.example:5443/team/"
            "shop:1.0 --lock server.lock --wheelhouse wheels --engine-executable "
            "/usr/bin/docker --engine-socket /var/run/docker.sock --credentials auth.json "
            "--output-dir plan",
        ),
        "0 written, 2 a bad input or a different file already there",
    ),
    "expose": ("Repository bundles under operator and exposure policies.", (), ""),
    "expose build": (
        "Build a direct service bundle from a repository (a local tree or a pinned git "
        "commit) under an operator policy, an exposure policy and a readiness policy.",
        (
            "svcc expose build rest myproject --operator-policy operator.json "
            "--policy exposure.json --readiness-policy readiness.json --output-dir out",
        ),
        "0 written, 2 a policy refuses it or an input or output problem",
    ),
    "targets": (
        "List the installed targets, their descriptions and options.",
        ("svcc targets", "svcc targets --format json"),
        "0 listed",
    ),
    "clients": ("Client collections (Postman, Bruno, Insomnia, .http) from a REST bundle.", (), ""),
    "clients export": (
        "Write a collection for an API client into a new or empty folder: one request per "
        "capability with a body the server accepts.",
        (
            "svc clients export --bundle build/shapes-rest --format postman "
            "--output-dir build/shapes-postman",
        ),
        "0 written, 2 a changed bundle or a refused folder",
    ),
    "clients sync": (
        "Regenerate an exported folder from a new bundle; files you edited are never overwritten.",
        ("svc clients sync --bundle build/shapes-rest-2 --output-dir build/shapes-postman",),
        "0 synced, 1 a file was edited (each is named; nothing written), 2 a bad input",
    ),
    "cache": ("The environments `svcc serve` keeps, one per set of requirements.", (), ""),
    "cache list": (
        "List the environments svcc serve keeps: key, size, last use.",
        ("svcc cache list", "svcc cache list --format json"),
        "0 listed",
    ),
    "cache prune": (
        "Remove the environments no bundle used lately (all of them without --older-than); "
        "one being built is kept. A server still running from one loses it: stop it first.",
        ("svcc cache prune --older-than 30", "svcc cache prune"),
        "0 pruned",
    ),
    "explain": (
        "Print a diagnostic code's page of the manual (docs/diagnostics.md): what it means, "
        "what it makes the function, how to fix it. Without a code, list every code.",
        ("svcc explain SVC-R007",),
        "0 printed, 2 unknown code",
    ),
}


def _lines(line: str, width: int, rest: str, end: str = "") -> list[str]:
    """``line`` broken at spaces into lines of at most ``width`` (``end`` closes every line
    but the last: `` \\`` continues a shell command); later lines start with ``rest``."""
    indent = line[: len(line) - len(line.lstrip())]
    lines, current = [], indent
    for word in line.lstrip().split(" "):
        if current.strip() and len(current) + 1 + len(word) + len(end) > width:
            lines.append(current + end)
            current = rest
        current += word if not current.strip() else " " + word
    return [*lines, current]


def fit(text: str, width: int) -> str:
    """An epilog for a terminal ``width`` columns wide: a long example continues with `` \\``
    on indented lines, a long item of a list (``  1  text``) under its text, any other long
    line under its first word."""
    shown = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if len(line) <= width:
            shown.append(line)
        elif line.lstrip().startswith(("svcc ", "svc ")):
            shown += _lines(line, width, " " * (indent + 4), " \\")
        else:
            item = line.find("  ", indent)
            hang = item + 2 if 0 < item < indent + 8 else indent + 2
            shown += _lines(line, width, " " * hang)
    return "\n".join(shown)


def _epilog(examples: tuple[str, ...], exit_codes: str) -> str | None:
    if not examples:
        return None
    shown = [f"  {example}" for example in examples]
    return "\n".join(["example:", *shown, "", f"exit codes: {exit_codes}"])


def describe(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` its description and epilog from the table, found by its command path
    (``svcc plugins run`` -> ``plugins run``). Called when its help is printed, so a command
    that runs never reads the table."""
    path = parser.prog.partition(" ")[2]
    if not path:
        parser.epilog = TOP_EPILOG
    elif path in COMMANDS:
        description, examples, exit_codes = COMMANDS[path]
        parser.description = description
        parser.epilog = _epilog(examples, exit_codes)
