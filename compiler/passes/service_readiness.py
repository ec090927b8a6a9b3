"""The rules of a service class's methods (SVC-R085..R087), from the facts the front end
records (``ServiceDecl``).

Building the instance runs once at startup, after import, so its ``__init__`` and its setup
method are judged as import-time code: the same effect rules and the same data-file
declaration (a model read from a declared file beside the module is no effect; an
undeclared read, a download or an environment read is a reason with the import-time code's
hint). A method of a value the construction itself holds (``self.model.eval()``) is
accepted: the value came from calls judged here. The class definition itself (metaclass,
decorators) is judged by the module-wide class rule (SVC-R010), as every class is.
"""

from collections.abc import Callable, Iterable, Iterator

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.contracts.diagnostics.codes import Code
from svcc.ir.model import Capability, Evaluation, ModuleIR, ServiceDecl

# The judgement of import-time evaluations (``import_time.first_effect`` bound to the module's
# judge): the first that is not known harmless, with its code and a phrase.
FirstEffect = Callable[[tuple[Evaluation, ...]], tuple[Evaluation, tuple[Code, str]] | None]


def _own_value(evaluation: Evaluation) -> bool:
    """A call of a method of a value the construction holds (``self.model.eval()``, a local
    variable's): the value came from calls judged here already, or from the class body."""
    return evaluation.kind == "call" and (evaluation.callee or "").startswith("?.")


def construction_reasons(service: ServiceDecl, first_effect: FirstEffect) -> list[Diagnostic]:
    """What building ``service`` gives every method of it: a constructor that requires
    arguments, the construction's first effect (or its part the facts do not describe)."""
    out: list[Diagnostic] = []
    what = f"service class {service.name}"
    if service.required:
        names = ", ".join(repr(n) for n in service.required)
        out.append(
            diag(
                C.R085_SERVICE_NOT_CONSTRUCTIBLE,
                f"{what}: the constructor requires {names}; the server builds it with no arguments",
                service.span,
            )
        )
    built = "when the server builds it at startup" + (
        f" ({service.name}() and {service.setup}())" if service.setup else f" ({service.name}())"
    )
    found = first_effect(tuple(e for e in service.construction if not _own_value(e)))
    if found is not None:
        effect, (code, why) = found
        tail = f": {why}" if why else ""
        out.append(diag(code, f"{what}: {effect.text} runs {built}{tail}", effect.span))
    elif service.opaque is not None:
        out.append(
            diag(
                C.R087_SERVICE_METHOD_FORM,
                f"{what}: {service.opaque.text} is not read, so what runs {built} is unknown",
                service.opaque.span,
            )
        )
    return out


def service_reasons(
    ir: ModuleIR,
    cap: Capability,
    governed: bool,
    construction: Callable[[ServiceDecl], Iterable[Diagnostic]],
) -> Iterator[Diagnostic]:
    """The reasons of a service method ``cap``; none for a module-level function.
    ``construction`` gives its class's :func:`construction_reasons` (the same for every
    method of the class: the readiness pass judges them once per module)."""
    service = ir.service(cap.qualname)
    if service is None:
        return
    yield from construction(service)
    if governed:
        return
    method = cap.qualname.rpartition(".")[2]
    for write in service.state_writes:
        if write.method == method:
            yield diag(
                C.R086_SERVICE_STATE,
                f"{cap.name} rebinds self.{write.attribute}: in direct mode one instance serves "
                "every call, so a call sees what the calls before it left",
                write.span,
            )
