"""A function decorated with a ``functools.wraps`` wrapper that only warns and calls through
(semver's ``@deprecated``) is served: the server calls the wrapper, which answers what the
function returns; the served schema is the function's own signature."""

import textwrap
from pathlib import Path

from servers import generate, serving

SOURCE = textwrap.dedent(
    """
    import warnings
    from functools import partial, wraps


    def deprecated(func=None, *, version=None, category=DeprecationWarning):
        if func is None:
            return partial(deprecated, version=version, category=category)

        @wraps(func)
        def wrapper(*args, **kwargs):
            warnings.warn("deprecated since " + version, category=category, stacklevel=2)
            return func(*args, **kwargs)

        return wrapper


    @deprecated(version="2.10.0", category=UserWarning)
    def bump_major(version: str) -> str:
        major = int(version.split(".")[0])
        return f"{major + 1}.0.0"
    """
)


def test_a_call_through_wrapper_is_served_as_the_function(tmp_path: Path) -> None:
    source = tmp_path / "versions.py"
    source.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "rest"
    generate(source, out, "--select", "bump_major")
    with serving(out) as server, server.client() as client:
        spec = client.get("/openapi.json").json()
        assert "/capabilities/bump_major" in spec["paths"]
        answer = client.post("/capabilities/bump_major", json={"version": "3.4.5"})
        assert answer.status_code == 200, answer.text
        assert answer.json() == "4.0.0"
    log = next(tmp_path.glob("rest-*.log")).read_text(encoding="utf-8")
    assert "deprecated since 2.10.0" in log  # the warning, in the server's log
