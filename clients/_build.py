"""A verified bundle → the :class:`Collection` every format renders, bodies checked."""

from typing import Any, Final

from svcc.clients._bundle import Capability, RestBundle
from svcc.clients._collection import HEALTH_ID, Collection, Request, file_stems
from svcc.clients._examples import dumps_body, example_body
from svcc.clients._validator import BundleValidators, Rejected, bundle_validators
from svcc.contracts.errors import InputError, InternalError

MAX_BODY_CHARS: Final = 256 * 1024
HEALTH_SUMMARY: Final = "Health check: GET /health answers 200 while the server is up."


def _error_text(errors: list[dict[str, Any]]) -> str:
    first = errors[0] if errors else {}
    loc = first.get("loc")
    where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
    return f"{first.get('msg', 'refused')} at {where or 'body'}"


def checked_body(cap: Capability, bundle: RestBundle, validators: BundleValidators) -> str:
    """The example body of ``cap`` as text, accepted by the bundle's own validator.

    A literal default the validator refuses (``x: int = None``) is dropped and the body
    checked again; a refused value svcc made itself is a bug and says so.
    """
    required = set(cap.schema.get("required", ()))
    drop: frozenset[str] = frozenset()
    for _ in range(len(cap.schema.get("properties", {})) + 1):
        try:
            body = example_body(
                cap.schema,
                bundle.definitions,
                defaults=cap.defaults,
                positional_only=cap.positional_only,
                drop=drop,
            )
        except InputError as exc:
            raise InputError(f"{cap.name}: {exc}") from None
        text = dumps_body(body)
        if len(text) > MAX_BODY_CHARS:
            raise InputError(f"{cap.name}: the example body is over {MAX_BODY_CHARS} characters")
        try:
            validators.check(cap.schema, text.encode("utf-8"))
        except Rejected as exc:
            fields = {
                str(e["loc"][1])
                for e in exc.errors
                if isinstance(e.get("loc"), list) and len(e["loc"]) > 1
            }
            droppable = (fields & set(body)) - required - drop
            if not droppable:
                raise InternalError(
                    f"{cap.name}: the bundle's validator refuses the example body svcc "
                    f"derived ({_error_text(exc.errors)})"
                ) from None
            drop |= droppable
            continue
        return text
    raise InternalError(f"{cap.name}: no example body satisfies the bundle's validator")


def build_collection(bundle: RestBundle, *, base_url: str, name: str) -> Collection:
    # The health request's ids are the module's own: two collections imported side by side
    # (Insomnia matches resources by id) never share one.
    health = f"{HEALTH_ID}:{bundle.module}"
    stems = file_stems([(health, "health"), *((c.id, c.name) for c in bundle.capabilities)])
    requests = [
        Request(
            key=health,
            name="health",
            stem=stems[health],
            method="GET",
            path="/health",
            summary=HEALTH_SUMMARY,
            description=None,
            body=None,
        )
    ]
    with bundle_validators(bundle) as validators:
        requests.extend(
            Request(
                key=cap.id,
                name=cap.name,
                stem=stems[cap.id],
                method="POST",
                path=cap.route,
                summary=cap.summary,
                description=cap.description,
                body=checked_body(cap, bundle, validators),
            )
            for cap in bundle.capabilities
        )
    return Collection(name=name, module=bundle.module, base_url=base_url, requests=tuple(requests))
