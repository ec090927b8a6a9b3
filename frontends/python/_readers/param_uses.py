"""What a capability's body does with its parameters and the world: where it needs a
parameter to be a callable, a class or an object (``ParamUse``), its sensitive calls
and reads (``Capability.effects``) and the files it reads."""

import ast
from collections.abc import Callable

from svcc.frontends.python._effects import argument_names, recorded
from svcc.frontends.python._param_flow import object_uses
from svcc.frontends.python._readers.classes import ClassReader
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._statements import is_literal
from svcc.frontends.python._walk import walk
from svcc.frontends.python.data_reads import Body
from svcc.ir.model import Evaluation, FileRead, ParamUse, ParamUseKind, Span


class ParamUseReader(ClassReader):
    def _body_reads(self, fn: FunctionNode) -> Body:
        return Body(fn, self._resolve, self.symbols.qualify, self._read_path, self.src.span)

    def _param_uses(
        self, fn: FunctionNode, key: str, dropped: str | None = None
    ) -> tuple[dict[str, tuple[ParamUse, ...]], tuple[Evaluation, ...]]:
        """Where the body needs a parameter to be a callable, a class or an object no JSON
        value is (first use per kind), and the body's sensitive calls and reads (see
        ``Capability.effects``). ``dropped``: a parameter the capability leaves out (a
        method's instance), whose uses through values (``_param_flow``) are not looked for.

        One walk of the body; a name rebound in the body is still reported as a callable
        (conservative: the readiness pass only asks about parameters without a JSON type),
        but not for its attributes (``df = pd.DataFrame(df)`` makes ``df.drop`` fine)."""
        body = self._body_reads(fn)
        names = body.params
        qualify = self.symbols.qualify
        collected = _BodyUses(names, qualify, self.src.span, body)
        for stmt in fn.body:
            for node in walk(stmt):
                kind = type(node)
                if kind is ast.Call:  # exact types: the parser makes no subclasses
                    collected.call(node)  # type: ignore[arg-type]
                elif kind is ast.Attribute:
                    collected.attribute(node)  # type: ignore[arg-type]
                elif kind in _DEFINITION_NODES:
                    collected.definition(node)  # type: ignore[arg-type]
        found = collected.found
        # see _param_flow
        for flow in object_uses(fn, names, qualify, self.src.segment, dropped=dropped):
            found.setdefault(flow.param, {}).setdefault(
                flow.kind,
                ParamUse(
                    kind=flow.kind,
                    span=self.src.span(flow.node),
                    attribute=flow.attribute,
                    receiver=flow.receiver,
                ),
            )
        ordered = sorted(collected.effects.values(), key=lambda e: (e.span.line, e.span.column))
        self._reading[key] = (body, collected.calls, collected.own_reads)
        return {name: tuple(uses.values()) for name, uses in found.items()}, tuple(ordered)


class _BodyUses:
    """What one walk of a capability's body collects, in the walk's order: the parameter
    uses (``found``: first use per parameter and kind), the sensitive calls and reads and
    the files read on every call (``effects``), and the calls and the reads through a name
    bound more than once (``calls``, ``own_reads``: followed once the module is read)."""

    def __init__(
        self,
        names: set[str],
        qualify: Callable[[ast.expr], str | None],
        span: Callable[[ast.AST], Span],
        body: Body,
    ) -> None:
        self.names = names
        self.qualify = qualify
        self.span = span
        self.body = body
        self.found: dict[str, dict[ParamUseKind, ParamUse]] = {}
        self.effects: dict[str, Evaluation] = {}
        self.handled: set[int] = set()  # attributes inside a recorded chain
        self.own_reads: list[FileRead] = []  # through a name bound more than once
        self.calls: list[ast.Call] = []  # followed into the module's functions at the end

    def call(self, node: ast.Call) -> None:
        func = node.func
        self.note(func, "call", node)
        self.calls.append(node)
        self.file_reads(node)
        if type(func) is ast.Name or type(func) is ast.Attribute:
            callee = self.qualify(func)
            if callee is not None and recorded(callee):
                _mark_chain(func, self.handled)
                self.sensitive(callee, node, node)
            elif type(func) is ast.Attribute and func.attr in (
                "parse_args",
                "parse_known_args",
            ):
                self.sensitive(f"?.{func.attr}", node, node)
        if (
            isinstance(func, ast.Name)
            and func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            use: ParamUseKind = "isinstance" if func.id == "isinstance" else "issubclass"
            classes = node.args[1]
            for item in classes.elts if isinstance(classes, ast.Tuple) else [classes]:
                self.note(item, use, item)

    def attribute(self, node: ast.Attribute) -> None:
        if id(node) in self.handled:
            return
        callee = self.qualify(node)
        if callee is not None and recorded(callee):
            _mark_chain(node, self.handled)
            self.sensitive(callee, node, None)

    def definition(self, node: FunctionNode | ast.ClassDef) -> None:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            self.note(target, "decorator", dec)

    def file_reads(self, node: ast.Call) -> None:
        reads = self.body.reads(node)
        if reads is not None and len(reads) == 1:  # a file read on every call
            read = reads[0]
            self.effects[f"{read.callee}@{read.span.line}:{read.span.column}"] = read
        elif reads is not None:
            self.own_reads.append(FileRead(reads=tuple(reads)))

    def note(self, node: ast.expr, kind: ParamUseKind, where: ast.AST) -> None:
        if isinstance(node, ast.Name) and node.id in self.names:
            self.found.setdefault(node.id, {}).setdefault(
                kind, ParamUse(kind=kind, span=self.span(where))
            )

    def sensitive(self, callee: str, node: ast.AST, call: ast.Call | None) -> None:
        if callee not in self.effects:
            self.effects[callee] = Evaluation(
                kind="call" if call is not None else "read",
                text=f"call to {callee}()" if call is not None else f"read of {callee}",
                callee=callee,
                literal_arguments=call is None
                or all(is_literal(a) for a in [*call.args, *(k.value for k in call.keywords)]),
                names=argument_names(call, self.qualify) if call is not None else (),
                span=self.span(node),
            )


_DEFINITION_NODES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _mark_chain(node: ast.AST, handled: set[int]) -> None:
    """Mark the attributes inside a recorded chain (``os.environ.get`` recorded: not
    ``os.environ`` again)."""
    while isinstance(node, ast.Attribute):
        handled.add(id(node))
        node = node.value
