"""Capabilities: the public functions and the service classes' methods, with their
parameters, returns and streams, and the facts known once the whole module is read
(files read through called functions, reach, unbound names, path arguments)."""

import ast
from functools import cached_property

from svcc.frontends.python._descriptions import annotation_description, described
from svcc.frontends.python._docstrings import get_docstring
from svcc.frontends.python._inputs import Source as InputSource
from svcc.frontends.python._inputs import with_input
from svcc.frontends.python._reach import Reach
from svcc.frontends.python._read_calls import CalledReads
from svcc.frontends.python._readers.helpers import HELPER_DEPTH
from svcc.frontends.python._readers.param_uses import ParamUseReader
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._services import (
    changes_instance,
    construction_bodies,
    is_candidate,
    meant_as_service,
    required_parameters,
    service_methods,
    setup_method,
    state_writes,
)
from svcc.frontends.python._types import printable
from svcc.frontends.python._walk import children, walk
from svcc.frontends.python.path_arguments import PathFlow, with_path_reads
from svcc.frontends.python.unbound import with_unbound_reads
from svcc.ir.model import (
    Capability,
    Decorator,
    Default,
    FunctionForm,
    Parameter,
    ParamKind,
    ParamUse,
    Returns,
    ServiceDecl,
    Span,
    StateWrite,
    Stream,
)
from svcc.ir.records import evolve
from svcc.ir.types import AnyType, TypeNode, plain_json


class CapabilityReader(ParamUseReader):
    def _service(self, stmt: ast.ClassDef, guards: tuple[str, ...]) -> None:
        """A service class (see ``_services``): each public method a capability
        ``Class.method`` without its instance parameter, and the facts of building it."""
        qualify = self.symbols.qualify
        bases = self.classes[-1].bases
        for stale in self._service_capabilities.pop(stmt.name, ()):
            del self.capabilities[stale]  # the last definition of the class wins
            del self._capability_nodes[stale]
            self._instance_changers.discard(stale)
        self.services.pop(stmt.name, None)
        if stmt.name in self.models or not is_candidate(stmt, bases, qualify):
            return
        required = required_parameters(stmt)
        if required and not meant_as_service(stmt, bases):
            return  # a value type built with arguments (``Point(x, y)``), no service
        methods = service_methods(stmt, qualify)
        for fn in methods:
            name = f"{stmt.name}.{fn.name}"
            self.capabilities.pop(name, None)
            self.capabilities[name] = self._capability(fn, guards, qualname=name)
            self._capability_nodes[name] = fn
            self._service_capabilities.setdefault(stmt.name, []).append(name)
            if changes_instance(fn):
                self._instance_changers.add(name)
        calls, opaque = self._body_facts(construction_bodies(stmt))
        writes = sorted(
            (
                StateWrite(method=fn.name, attribute=attribute, span=self.src.span(node))
                for fn in methods
                for attribute, node in state_writes(fn)
            ),
            key=lambda w: (w.span.line, w.span.column),
        )
        self.services[stmt.name] = ServiceDecl(
            name=stmt.name,
            bases=bases,
            setup=setup_method(stmt),
            construction=calls,
            opaque=opaque,
            required=required,
            state_writes=tuple(writes),
            span=self.src.span(stmt),
        )

    def _capability(
        self, fn: FunctionNode, guards: tuple[str, ...], qualname: str | None = None
    ) -> Capability:
        """``fn`` as a capability; a service method's (``qualname`` ``Class.method``) has
        no instance parameter."""
        name = qualname or fn.name
        is_async = isinstance(fn, ast.AsyncFunctionDef)
        generator = self._is_generator(fn)
        form: FunctionForm = (
            ("async_generator" if is_async else "generator") if generator else "function"
        )
        returns = Returns(
            annotation=self.src.segment(fn.returns) if fn.returns else None,
            type=self.types.resolve(fn.returns) if fn.returns else AnyType(),
            span=self.src.span(fn.returns) if fn.returns else None,
        )
        # a method's instance parameter (the first) is no parameter of the capability
        instance = _first_parameter(fn.args) if qualname else None
        uses, effects = self._param_uses(fn, name, instance)
        params = tuple(self._params(fn.args, uses))
        return Capability(
            id=f"python:{self.module}:{name}",
            name=name,
            qualname=name,
            execution="async" if is_async else "sync",
            form=form,
            params=params[1:] if qualname else params,
            returns=returns,
            docstring=doc_text(get_docstring(fn)),
            decorators=tuple(
                Decorator(
                    text=self.src.segment(d),
                    span=self.src.span(d),
                    identity_unless=self._fallback_group(d),
                )
                for d in fn.decorator_list
                if not self.values.is_identity(d)  # returns the function itself
            ),
            guards=guards,
            span=self.src.span(fn),
            effects=effects,
            stream=self._stream(fn) if generator else None,
        )

    def _stream(self, fn: FunctionNode) -> Stream:
        """A generator's items (see ``Stream``): from the return annotation, and whether the
        body uses a ``yield``'s value."""
        found = self.types.stream_item(fn.returns) if fn.returns is not None else None
        item, node = found if found is not None else (AnyType(), None)
        return Stream(
            item=item,
            annotation=self.src.segment(node) if node is not None else None,
            span=self.src.span(node) if node is not None else None,
            iterator=fn.returns is None or found is not None,
            sends=self._sends(fn),
        )

    def _sends(self, fn: FunctionNode) -> Span | None:
        """The first ``yield`` whose value the body uses (``x = yield item``): only a
        ``yield`` standing as a statement discards what ``send()`` passes."""
        stack: list[ast.AST] = list(fn.body)
        statements: set[int] = set()
        found: list[ast.Yield] = []
        while stack:
            node = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield):
                statements.add(id(node.value))
            elif isinstance(node, ast.Yield) and id(node) not in statements:
                found.append(node)
            stack.extend(children(node))
        if not found:
            return None
        first = min(found, key=lambda y: (y.lineno, y.col_offset))
        return self.src.span(first)

    def _finished_capabilities(self) -> tuple[Capability, ...]:
        """The capabilities with the facts known once the whole module is read: files read
        through the functions they call, module names nothing binds (``unbound``), paths a
        parameter reaches (``path_arguments``)."""
        caps = self._with_reach(self._file_reads())
        nodes = self._capability_nodes
        caps = with_unbound_reads(caps, nodes, self._module_names, self.src.span)
        flow = PathFlow(self._functions, self._resolve, walk)  # shared walks (``_lower``)
        calls = {name: reading[1] for name, reading in self._reading.items()}
        return tuple(with_path_reads(caps, nodes, flow, self.src.span, calls).values())

    def _file_reads(self) -> dict[str, Capability]:
        """The capabilities with the files they read through the module's functions they
        call (see ``_read_calls``), found once every function and name is known."""
        called = CalledReads(
            self._functions,
            self._class_nodes,
            self._origins,
            qualify=self.symbols.qualify,
            make_body=self._body_reads,
            span=self.src.span,
            depth=HELPER_DEPTH,
        )
        out: dict[str, Capability] = {}
        for name, cap in self.capabilities.items():
            body, calls, own_reads = self._reading[name]
            reads = (*own_reads, *called.of(name, body, calls))
            out[name] = evolve(cap, file_reads=reads) if reads else cap
        return out

    def _with_reach(self, capabilities: dict[str, Capability]) -> dict[str, Capability]:
        """The capabilities with what each reaches when it runs (see ``_reach``), found once
        every function and name of the module is known."""
        reach = Reach(self._functions, self._origins, self.symbols.qualify, HELPER_DEPTH)
        out: dict[str, Capability] = {}
        for name, cap in capabilities.items():
            objects = frozenset(p.name for p in cap.params if not plain_json(p.type))
            node = self._capability_nodes[name]
            found = reach.of(node, objects)
            wrapper = [c for d in node.decorator_list for c in self.values.wrapper_reach(d)]
            if wrapper:
                found = tuple(sorted({*found, *wrapper}))
            if name in self._instance_changers:
                found = tuple(sorted({*found, "<state>"}))
            out[name] = evolve(cap, reach=found) if found else cap
        return out

    def _params(
        self, args: ast.arguments, uses: dict[str, tuple[ParamUse, ...]]
    ) -> list[Parameter]:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        out: list[Parameter] = []
        for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            kind: ParamKind = (
                "positional_only" if index < len(args.posonlyargs) else "positional_or_keyword"
            )
            out.append(self._param(arg, kind, default, uses))
        if args.vararg is not None:
            out.append(self._param(args.vararg, "var_positional", None, uses))
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            out.append(self._param(arg, "keyword_only", kw_default, uses))
        if args.kwarg is not None:
            out.append(self._param(args.kwarg, "var_keyword", None, uses))
        return out

    def _param(
        self,
        arg: ast.arg,
        kind: ParamKind,
        default: ast.expr | None,
        uses: dict[str, tuple[ParamUse, ...]],
    ) -> Parameter:
        annotation = arg.annotation
        type_: TypeNode = AnyType() if annotation is None else self.types.resolve(annotation)
        param = Parameter(
            name=arg.arg,
            kind=kind,
            annotation=self.src.segment(annotation) if annotation is not None else None,
            type=type_,
            default=(
                Default(text=self.src.segment(default), span=self.src.span(default))
                if default is not None
                else None
            ),
            span=self.src.span(arg),
            uses=uses.get(arg.arg, ()),
            description=annotation_description(annotation, self.symbols.qualify)
            or described(default, self.symbols.qualify),
        )
        return with_input(param, annotation, default, self._input_source)

    @cached_property
    def _input_source(self) -> InputSource:
        """How ``with_input`` reads a descriptor: the module's, built once, not per parameter."""
        return InputSource(self.symbols.qualify, self.src.segment, self.src.span)

    def _is_generator(self, fn: FunctionNode) -> bool:
        if not self.src.mentions(fn, "yield"):  # the module's lines holding it, found once
            return False
        stack: list[ast.AST] = list(fn.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Yield | ast.YieldFrom):
                return True
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            stack.extend(children(node))
        return False


def _first_parameter(args: ast.arguments) -> str | None:
    """The name of the first parameter ``_params`` lists (``params[0]``), if any."""
    for arg in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]:
        if arg is not None:
            return arg.arg
    return None


def doc_text(text: str | None) -> str | None:
    return None if text is None else printable(text)
