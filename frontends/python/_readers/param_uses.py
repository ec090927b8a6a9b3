"""What a capability's body does with its parameters and the world: where it needs a
parameter to be a callable, a class or an object (``ParamUse``), its sensitive calls
and reads (``Capability.effects``) and the files it reads."""

import ast

from svcc.frontends.python._effects import argument_names, recorded
from svcc.frontends.python._param_flow import object_uses
from svcc.frontends.python._readers.classes import ClassReader
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._statements import is_literal
from svcc.frontends.python._walk import walk
from svcc.frontends.python.data_reads import Body
from svcc.ir.model import Evaluation, FileRead, ParamUse, ParamUseKind


class ParamUseReader(ClassReader):
    def _body_reads(self, fn: FunctionNode) -> Body:
        return Body(fn, self._resolve, self.symbols.qualify, self._read_path, self.src.span)

    def _param_uses(
        self, fn: FunctionNode, key: str
    ) -> tuple[dict[str, tuple[ParamUse, ...]], tuple[Evaluation, ...]]:
        """Where the body needs a parameter to be a callable, a class or an object no JSON
        value is (first use per kind), and the body's sensitive calls and reads (see
        ``Capability.effects``).

        One walk of the body; a name rebound in the body is still reported as a callable
        (conservative: the readiness pass only asks about parameters without a JSON type),
        but not for its attributes (``df = pd.DataFrame(df)`` makes ``df.drop`` fine)."""
        body = self._body_reads(fn)
        names = body.params
        found: dict[str, dict[ParamUseKind, ParamUse]] = {}
        handled: set[int] = set()
        effects: dict[str, Evaluation] = {}
        qualify = self.symbols.qualify
        own_reads: list[FileRead] = []  # through a name bound more than once
        calls: list[ast.Call] = []  # followed into the module's functions at the end

        def note(node: ast.expr, kind: ParamUseKind, where: ast.AST) -> None:
            if isinstance(node, ast.Name) and node.id in names:
                found.setdefault(node.id, {}).setdefault(
                    kind, ParamUse(kind=kind, span=self.src.span(where))
                )

        def sensitive(callee: str, node: ast.AST, call: ast.Call | None) -> None:
            if callee not in effects:
                effects[callee] = Evaluation(
                    kind="call" if call is not None else "read",
                    text=f"call to {callee}()" if call is not None else f"read of {callee}",
                    callee=callee,
                    literal_arguments=call is None
                    or all(is_literal(a) for a in [*call.args, *(k.value for k in call.keywords)]),
                    names=argument_names(call, qualify) if call is not None else (),
                    span=self.src.span(node),
                )

        for stmt in fn.body:
            for node in walk(stmt):
                kind = type(node)
                if kind is ast.Call:  # exact types: the parser makes no subclasses
                    func = node.func  # type: ignore[attr-defined]
                    note(func, "call", node)
                    calls.append(node)  # type: ignore[arg-type]
                    reads = body.reads(node)  # type: ignore[arg-type]
                    if reads is not None and len(reads) == 1:  # a file read on every call
                        read = reads[0]
                        effects[f"{read.callee}@{read.span.line}:{read.span.column}"] = read
                    elif reads is not None:
                        own_reads.append(FileRead(reads=tuple(reads)))
                    if type(func) is ast.Name or type(func) is ast.Attribute:
                        callee = qualify(func)
                        if callee is not None and recorded(callee):
                            _mark_chain(func, handled)
                            sensitive(callee, node, node)  # type: ignore[arg-type]
                        elif type(func) is ast.Attribute and func.attr in (
                            "parse_args",
                            "parse_known_args",
                        ):
                            sensitive(f"?.{func.attr}", node, node)  # type: ignore[arg-type]
                    if (
                        isinstance(func, ast.Name)
                        and func.id in ("isinstance", "issubclass")
                        and len(node.args) == 2  # type: ignore[attr-defined]
                    ):
                        use: ParamUseKind = (
                            "isinstance" if func.id == "isinstance" else "issubclass"
                        )
                        classes = node.args[1]  # type: ignore[attr-defined]
                        for item in classes.elts if isinstance(classes, ast.Tuple) else [classes]:
                            note(item, use, item)
                elif kind is ast.Attribute:
                    if id(node) in handled:
                        continue
                    callee = qualify(node)  # type: ignore[arg-type]
                    if callee is not None and recorded(callee):
                        _mark_chain(node, handled)
                        sensitive(callee, node, None)
                elif kind in _DEFINITION_NODES:
                    for dec in node.decorator_list:  # type: ignore[attr-defined]
                        target = dec.func if isinstance(dec, ast.Call) else dec
                        note(target, "decorator", dec)
        for flow in object_uses(fn, names, qualify, self.src.segment):  # see _param_flow
            found.setdefault(flow.param, {}).setdefault(
                flow.kind,
                ParamUse(
                    kind=flow.kind,
                    span=self.src.span(flow.node),
                    attribute=flow.attribute,
                    receiver=flow.receiver,
                ),
            )
        ordered = sorted(effects.values(), key=lambda e: (e.span.line, e.span.column))
        self._reading[key] = (body, calls, own_reads)
        return {name: tuple(uses.values()) for name, uses in found.items()}, tuple(ordered)


_DEFINITION_NODES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _mark_chain(node: ast.AST, handled: set[int]) -> None:
    """Mark the attributes inside a recorded chain (``os.environ.get`` recorded: not
    ``os.environ`` again)."""
    while isinstance(node, ast.Attribute):
        handled.add(id(node))
        node = node.value
