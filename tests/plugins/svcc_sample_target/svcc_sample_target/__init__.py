"""A third-party servable target: a Markdown page of the capabilities, served over HTTP.

Everything svcc needs to know about the bundle is declared on the class (``bundle``): the
manifest, the glue file, how ``svcc serve`` runs it and the module names it occupies. svcc
itself is not edited to add it; ``docs/adding-a-target.md`` walks through this file.
"""

from typing import ClassVar, Final, Literal

from attrs import field, frozen
from svcc.backends.bundle import assemble
from svcc.contracts.target import BundleSpec, EmitContext, FileTree
from svcc.ir.model import ModuleIR

BUNDLE: Final = BundleSpec(
    interface="sample",
    manifest="svc-sample.json",
    manifest_schema="svc.sample-bundle/v1",
    glue="server.py",
    # Run from the bundle with the bundle's own interpreter; {host}/{port} from `svcc serve`.
    serve=("server.py", "{host}", "{port}"),
    interface_document="CAPABILITIES.md",  # its digest labels an image of the bundle
    reserved_modules=frozenset({"server"}),
)

# The glue: standard library only, so the bundle's requirements.txt is empty.
SERVER = '''\
"""Serves CAPABILITIES.md at / and {"status": "ok"} at /health (svcc sample target)."""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = (Path(__file__).resolve().parent / "CAPABILITIES.md").read_bytes()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes = {
            "/": (PAGE, "text/markdown; charset=utf-8"),
            "/health": (b'{"status": "ok"}', "application/json"),
        }
        body, kind = routes.get(self.path, (b"not found\\n", "text/plain"))
        self.send_response(200 if self.path in routes else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler).serve_forever()
'''


@frozen
class SampleTarget:
    name: ClassVar[str] = "sample"
    description: ClassVar[str] = "a Markdown page listing the capabilities (test plugin)"
    supports_execution_policy: ClassVar[bool] = False
    bundle: ClassVar[BundleSpec | None] = BUNDLE

    # Options: `svcc compile FILE --target sample --title TEXT --style list|table`.
    title: str | None = field(
        default=None,
        metadata={"help": "the page title (default: the module name)", "metavar": "TEXT"},
    )
    style: Literal["list", "table"] = field(
        default="list", metadata={"help": "how capabilities are laid out", "metavar": "STYLE"}
    )

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        """The page and the glue; ``assemble`` adds the sources and the manifest, for a file
        and a directory alike (``ir`` is the program's view: every selected capability)."""
        table = self.style == "table"
        lines = [f"# {self.title or ir.module}", ""]
        lines += ["| function | parameters | summary |", "| --- | --- | --- |"] if table else []
        for cap in ir.capabilities:
            params = ", ".join(p.name for p in cap.params)
            summary = (cap.docstring or "undocumented").split("\n", 1)[0]
            row = f"| `{cap.name}` | {params} | {summary} |"
            lines.append(row if table else f"- `{cap.name}({params})`: {summary}")
        page = ("\n".join(lines) + "\n").encode()
        return assemble(BUNDLE, ir, ctx, {"CAPABILITIES.md": page, BUNDLE.glue: SERVER.encode()})
