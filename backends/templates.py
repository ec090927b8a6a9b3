"""The one jinja2 environment every back end (and the analysis service) renders with: glue
only, strict, deterministic. Public, so the service need not reach into ``backends._common``."""

from functools import cache

import jinja2


@cache
def make_env(package: str) -> jinja2.Environment:
    """Templates of ``package`` (``svcc.backends.rest`` → its ``templates/`` folder)."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(package: str, name: str, **view: object) -> bytes:
    return make_env(package).get_template(name).render(**view).encode("utf-8", "backslashreplace")
