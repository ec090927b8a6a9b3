"""The jinja2 environment for the text formats (``.bru``, ``.http``): strict and glue-only."""

from functools import cache

import jinja2


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("svcc.clients", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(template: str, **view: object) -> bytes:
    return _env().get_template(template).render(**view).encode("utf-8")
