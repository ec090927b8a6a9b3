"""Container files from a :class:`ContainerizerConfiguration`: pure functions, path → bytes.

- the WSGI entry and gunicorn settings (``bind`` host:port, workers, timeout, the uvicorn
  worker class for the ASGI application);
- ``requirements.txt``: the REST server's own requirements, gunicorn and its uvicorn
  worker, ``custom_packages``, ``svc_requirements`` and the dependencies' names,
  de-duplicated by normalised name (a pinned spec wins over a bare name) and sorted;
- ``Containerfile`` for the alpine (``apk``) or debian (``apt-get``) family chosen from the
  image: multi-stage (no build tools in the final image), the dependencies' system packages,
  numeric non-root user, ``EXPOSE`` and a ``HEALTHCHECK`` on ``/health``; the base image is
  ``python:<python_version>-<container_image_tag>``.
"""

from typing import Final

from svcc.backends.rest import BUNDLE as REST_BUNDLE
from svcc.backends.templates import render
from svcc.contracts.requirements import is_pinned, requirement_name
from svcc.service.config import ContainerizerConfiguration

PACKAGE: Final = "svcc.service"
SERVER_EXTRAS: Final = ("gunicorn>=22,<28", "uvicorn-worker>=0.2,<1")


def _module(file_name: str) -> str:
    return file_name[:-3] if file_name.endswith(".py") else file_name


def server_files(conf: ContainerizerConfiguration) -> dict[str, bytes]:
    server = conf.server
    host = (
        f"[{server.host}]"
        if ":" in server.host and not server.host.startswith("[")
        else server.host
    )
    return {
        server.wsgi_file_name: render(
            PACKAGE,
            "wsgi.py.jinja",
            api_module=_module(conf.api_filename),
            conf_file=server.wsgi_conf_file_name,
        ),
        server.wsgi_conf_file_name: render(
            PACKAGE,
            "gunicorn.conf.py.jinja",
            wsgi_module=_module(server.wsgi_file_name),
            bind=f"{host}:{server.port}",
            workers=server.workers,
            timeout=server.timeout,
        ),
    }


def requirement_lines(conf: ContainerizerConfiguration) -> list[str]:
    chosen: dict[str, str] = {}
    candidates = [
        *REST_BUNDLE.server_requirements,
        *SERVER_EXTRAS,
        *conf.custom_packages,
        *conf.svc_requirements,
        *(d.name for d in conf.dependencies),
    ]
    for requirement in candidates:
        key = requirement_name(requirement)
        if key not in chosen or is_pinned(requirement):
            chosen[key] = requirement
    return [chosen[key] for key in sorted(chosen)]


def requirements_file(
    conf: ContainerizerConfiguration, name: str = "requirements.txt"
) -> dict[str, bytes]:
    return {name: "".join(f"{line}\n" for line in requirement_lines(conf)).encode()}


def containerfile(
    conf: ContainerizerConfiguration, requirements: str = "requirements.txt"
) -> dict[str, bytes]:
    major, minor = conf.python_version
    packages = sorted({p for d in conf.dependencies for p in d.packages})
    return {
        "Containerfile": render(
            PACKAGE,
            "Containerfile.jinja",
            base_image=f"python:{major}.{minor}-{conf.container_image_tag}",
            family=conf.family,
            packages=packages,
            source=f"{conf.main_folder}/" if conf.main_folder else ".",
            port=conf.server.port,
            conf_file=conf.server.wsgi_conf_file_name,
            requirements=requirements,
        )
    }
