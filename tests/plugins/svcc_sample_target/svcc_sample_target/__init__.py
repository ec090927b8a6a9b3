"""A third-party target: one Markdown page listing the selected capabilities."""

from typing import ClassVar

from attrs import frozen
from svcc.compiler.target import EmitContext, FileTree
from svcc.ir.model import ModuleIR


@frozen
class SampleTarget:
    name: ClassVar[str] = "sample"
    description: ClassVar[str] = "a Markdown page listing the capabilities (test plugin)"

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        lines = [f"# {ir.module}", ""]
        for cap in ir.capabilities:
            params = ", ".join(p.name for p in cap.params)
            lines.append(f"- `{cap.name}({params})`: {cap.docstring or 'undocumented'}")
        return FileTree.of({"CAPABILITIES.md": ("\n".join(lines) + "\n").encode()})
