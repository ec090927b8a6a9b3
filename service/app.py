"""The HTTP analysis service: a Falcon WSGI application over the compiler's own passes.

``create_app(workspace=..., ...)`` builds it; any WSGI server can serve it (``svcc
serve-analysis`` runs it under gunicorn). Every route is ``POST`` with a trailing slash.
Scalar parameters come as multipart form fields, url-encoded fields or query parameters;
files as ``multipart/form-data``; ``conf`` as a JSON body (the object itself, or
``{"conf": {...}}``). Errors are JSON ``{"title", "description"}``, never a traceback. Every
client path is confined to the workspace; existing files are only replaced with
``overwrite=true``. A body is read in full (bounded, chunked or not) before anything parses
it, and every analysis of client input runs in the worker's :class:`~svcc.service.budget.Sandbox`
under the request budget (an overrun is a 422).
"""

import codecs
import io
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Final, TypeVar
from urllib.parse import parse_qsl

import falcon
from falcon.media.multipart import MultipartParseError
from svcc.contracts.errors import (
    IneligibleError,
    InputError,
    OutputError,
    SvccError,
    UsageError,
)
from svcc.service.analysis import (
    Refused,
    Unanalysable,
    analyse_directory_answer,
    analyse_upload,
    bundle_files,
    process_upload,
    warm_up,
)
from svcc.service.budget import (
    DEFAULT_MEMORY,
    DEFAULT_SECONDS,
    Budget,
    ChildFailed,
    OverBudget,
    Sandbox,
)
from svcc.service.config import ConfigError, ContainerizerConfiguration, parse_configuration
from svcc.service.workspace import Exists, PathRefused, Workspace

T = TypeVar("T")

log = logging.getLogger("svcc.service")

DEFAULT_MAX_UPLOAD: Final = 16 * 1024 * 1024
DEFAULT_MAX_FILES: Final = 10_000
MAX_CONF_BYTES: Final = 1024 * 1024
DEFAULT_READ_SECONDS: Final = 10.0
CONTAINER_REQUIREMENTS: Final = "container-requirements.txt"


def read_body(req: falcon.Request, limit: int, read_seconds: float = DEFAULT_READ_SECONDS) -> bytes:
    """The whole request body, at most ``limit`` bytes, whatever its framing.

    ``Content-Length`` bodies are read to their announced length (a shorter body is a 400);
    chunked bodies (no length; gunicorn decodes the chunks) are read to their end. Over the
    limit is a 413 before anything acts on the request: a handler never sees a body it did
    not read in full. A malformed chunked body is a 400; a client that pauses more than
    ``read_seconds``, or takes more than six times that for the whole body, a 408
    (:class:`BodyClock`)."""
    from gunicorn.http.errors import NoMoreData, ParseException

    try:
        clock = BodyClock(req, read_seconds)
        body = _read_body(req, limit, clock.read)
        clock.done()
        return body
    except TimeoutError:
        raise falcon.HTTPError(
            falcon.HTTP_408,
            description=f"the request body did not arrive in time (a pause over {read_seconds:g} s "
            f"or over {6 * read_seconds:g} s in all)",
        ) from None
    except NoMoreData:
        raise falcon.HTTPBadRequest(description="the body ended before its announced end") from None
    except ParseException as exc:
        raise falcon.HTTPBadRequest(
            description=f"malformed chunked body: {type(exc).__name__}"
        ) from None


class BodyClock:
    """Reads of the body: each may wait ``read_seconds`` at most, and all of them together
    six times that (the socket's timeout, set before each read, when the server is
    gunicorn: ``gunicorn.socket``). Other WSGI servers keep their own timeouts."""

    def __init__(self, req: falcon.Request, read_seconds: float) -> None:
        self._socket: Any = req.env.get("gunicorn.socket")
        self._read_seconds = read_seconds
        self._deadline = time.monotonic() + 6 * read_seconds
        self._stream: Any = req.stream

    def read(self, size: int) -> bytes:
        if self._socket is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the whole body took too long")
            self._socket.settimeout(min(self._read_seconds, left))
        data: bytes = self._stream.read(size)
        return data

    def done(self) -> None:
        """The answer is written with the plain read timeout, whatever was left."""
        if self._socket is not None:
            self._socket.settimeout(self._read_seconds)


def _read_body(req: falcon.Request, limit: int, read: Callable[[int], bytes]) -> bytes:
    length = req.content_length
    chunked = "chunked" in (req.get_header("Transfer-Encoding") or "").lower()
    if length is not None and length > limit:
        raise falcon.HTTPContentTooLarge(
            description=f"the request body is over the {limit}-byte limit"
        )
    if not chunked and not length:
        return b""
    want = limit + 1 if chunked or length is None else length
    parts: list[bytes] = []
    size = 0
    while size < want:
        chunk = read(min(want - size, 1 << 20))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    if size > limit:
        raise falcon.HTTPContentTooLarge(
            description=f"the request body is over the {limit}-byte limit"
        )
    if length is not None and not chunked and size != length:
        raise falcon.HTTPBadRequest(
            description=f"the body ended after {size} of {length} announced bytes"
        )
    return b"".join(parts)


def media_type(req: falcon.Request) -> str:
    return (req.content_type or "").split(";")[0].strip().lower()


class Request:
    """The parameters of one request, from the form or the query string, read once.

    The body is read in full (bounded, chunked or not) before it is parsed; a body in a
    media type the route does not take is a 415, never silently ignored."""

    def __init__(
        self,
        req: falcon.Request,
        max_upload: int,
        multipart: Any,
        read_seconds: float = DEFAULT_READ_SECONDS,
    ) -> None:
        self.fields: dict[str, str] = {
            key: value if isinstance(value, str) else ",".join(value)
            for key, value in req.params.items()
        }
        self.file: tuple[str, bytes] | None = None
        body = read_body(req, max_upload, read_seconds)
        media = media_type(req)
        if media == "multipart/form-data":
            try:
                form = multipart.deserialize(io.BytesIO(body), req.content_type, len(body))
                for part in form:
                    if part.filename is not None:
                        self.file = (part.filename, part.get_data())
                    else:
                        self.fields[part.name or ""] = part.get_text() or ""
            except MultipartParseError as exc:
                if "exceed" in str(exc).lower() or "size" in str(exc).lower():
                    raise falcon.HTTPContentTooLarge(description=str(exc)) from None
                raise falcon.HTTPBadRequest(
                    description=f"malformed multipart body: {exc}"
                ) from None
            except (UnicodeDecodeError, ValueError) as exc:
                raise falcon.HTTPBadRequest(
                    description=f"malformed multipart body: {type(exc).__name__}: {exc}"[:300]
                ) from None
        elif media == "application/x-www-form-urlencoded":
            try:
                text = body.decode("utf-8")
                pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False)
            except (UnicodeDecodeError, ValueError):
                raise falcon.HTTPBadRequest(description="the form body is not UTF-8") from None
            self.fields.update(dict(pairs))
        elif body:
            raise falcon.HTTPUnsupportedMediaType(
                description="send parameters as multipart/form-data, "
                "application/x-www-form-urlencoded or the query string"
            )

    def upload(self) -> tuple[str, bytes]:
        """The uploaded file; its name reaches generated text (a header, a default output
        name), so it must be one printable line of at most 255 bytes."""
        if self.file is None:
            raise falcon.HTTPBadRequest(description="file is required (multipart upload)")
        name, data = self.file
        if not name.isprintable() or len(name.encode("utf-8", "surrogatepass")) > 255:
            raise falcon.HTTPBadRequest(
                description="the uploaded file name must be one printable line of at most 255 bytes"
            )
        return name, data

    def text(self, name: str, default: str | None = None) -> str | None:
        return self.fields.get(name, default)

    def required(self, name: str) -> str:
        value = self.fields.get(name)
        if value is None:
            raise falcon.HTTPBadRequest(description=f"{name} is required")
        return value

    def names(self, name: str) -> list[str] | None:
        value = self.fields.get(name)
        if value is None or not value.strip():
            return None
        return [item.strip() for item in value.split(",") if item.strip()]

    def flag(self, name: str) -> bool:
        value = self.fields.get(name, "false").lower()
        if value not in ("true", "false", "1", "0"):
            raise falcon.HTTPBadRequest(description=f"{name} must be true or false")
        return value in ("true", "1")


def _encoding(value: str | None) -> str:
    name = value or "utf-8"
    try:
        if len(name) > 64:
            raise LookupError
        codecs.lookup(name)
    except LookupError:
        raise falcon.HTTPBadRequest(description=f"unknown encoding {name[:64]!r}") from None
    return name


def _python_version(value: str | None) -> str:
    """The grammar to parse with; a refusal names this field (not the CLI's option)."""
    from svcc.ir.python_version import parse_python_version

    text = value or "3.8"
    try:
        parse_python_version(text, "python_version")
    except ValueError as exc:
        raise falcon.HTTPBadRequest(description=str(exc)) from None
    return text


def supported_format(filename: str) -> str:
    """The upload's suffix, ``.py`` or ``.ipynb``; any other is a 400 naming the formats
    (as the command line's "unsupported format"), never read as Python."""
    from svcc.compiler.driver import SUFFIXES

    name = PurePosixPath(filename).name
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise falcon.HTTPBadRequest(
            title="Invalid file type",
            description=f"{name[:200]!r}: unsupported format; expected a Python file (.py) "
            "or a notebook (.ipynb)",
        )
    return suffix


def with_application_requirements(
    conf: ContainerizerConfiguration, files: dict[str, bytes]
) -> ContainerizerConfiguration:
    """``conf`` whose ``svc_requirements`` also hold the bundle's declared application
    requirements (``application-requirements.txt``), so that the image installs them."""
    import attrs

    text = files.get("application-requirements.txt", b"").decode("utf-8")
    lines = [line.strip() for line in text.splitlines()]
    declared = tuple(line for line in lines if line and not line.startswith("#"))
    if not declared:
        return conf
    try:
        return attrs.evolve(conf, svc_requirements=(*conf.svc_requirements, *declared))
    except (ConfigError, ValueError, TypeError) as exc:
        raise falcon.HTTPBadRequest(description=f"requirements: {exc}") from None


def ineligible(resp: falcon.Response, exc: IneligibleError, shown: Callable[[str], str]) -> None:
    """A 422 for a selection that is not eligible, with every readiness reason (code,
    message, line) as ``svcc compile`` reports them with exit 1."""
    resp.status = falcon.HTTP_422
    resp.media = {
        "title": "Not eligible",
        "description": shown(str(exc)),
        "reasons": [
            {**reason.to_json(), "message": shown(reason.message)} for reason in exc.reasons
        ],
    }


class Service:
    def __init__(
        self,
        workspace: Workspace,
        max_upload: int,
        max_files: int,
        budget: Budget,
        multipart: Any,
        *,
        read_seconds: float = DEFAULT_READ_SECONDS,
    ) -> None:
        self.workspace = workspace
        self.read_seconds = read_seconds
        self.max_upload = max_upload
        self.max_files = max_files
        self.budget = budget
        self.sandbox = Sandbox(budget)
        self.multipart = multipart

    def _params(self, req: falcon.Request) -> Request:
        return Request(req, self.max_upload, self.multipart, self.read_seconds)

    def _path(self, given: str, what: str) -> Path:
        try:
            return self.workspace.resolve(given, what)
        except PathRefused as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None

    def _bounded(
        self,
        function: Callable[..., T],
        *args: Any,
        unanalysable_status: Callable[..., falcon.HTTPError] = falcon.HTTPBadRequest,
        **kwargs: Any,
    ) -> T:
        """``function(*args, **kwargs)`` in the worker's sandbox under the request budget;
        an overrun is a JSON 422."""
        try:
            return self.sandbox.run(function, *args, **kwargs)
        except OverBudget as exc:
            raise falcon.HTTPUnprocessableEntity(
                title="Over the analysis budget", description=str(exc)
            ) from None
        except Refused as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None
        except Unanalysable as exc:
            raise unanalysable_status(
                title="Source not analysable", description=self.workspace.shown(str(exc))
            ) from None
        except ChildFailed as exc:
            log.error("analysis child failed:\n%s", exc)
            raise falcon.HTTPInternalServerError(
                description="the analysis failed (details are logged)"
            ) from None

    # -- analysis ---------------------------------------------------------------------------
    def on_post_analyze_file(self, req: falcon.Request, resp: falcon.Response) -> None:
        params = self._params(req)
        filename, data = params.upload()
        supported_format(filename)
        version = _python_version(params.text("python_version"))
        encoding = _encoding(params.text("encoding"))
        only = params.names("functions_to_analyze")
        ignore = params.names("ignore") or []
        resp.data = self._bounded(
            analyse_upload,
            data,
            filename,
            python_version=version,
            encoding=encoding,
            only=only,
            ignore=ignore,
        )
        resp.content_type = falcon.MEDIA_JSON

    def on_post_analyse_directory(self, req: falcon.Request, resp: falcon.Response) -> None:

        params = self._params(req)
        given = params.required("directory_path")
        directory = self._path(given, "directory_path")
        if not directory.is_dir():
            raise falcon.HTTPBadRequest(description=f"directory_path {given!r} is not a directory")
        only = params.names("functions_to_analyze")
        ignore = params.names("ignore") or []
        version = _python_version(params.text("python_version"))
        encoding = _encoding(params.text("encoding"))
        resp.data = self._bounded(
            analyse_directory_answer,
            directory,
            self.workspace.relative(directory),
            limit=self.max_files,
            python_version=version,
            encoding=encoding,
            only=only,
            ignore=ignore,
            file_seconds=self.budget.seconds / 4,
            total_seconds=self.budget.seconds * 0.9,
        )
        resp.content_type = falcon.MEDIA_JSON

    # -- processing ---------------------------------------------------------------------------
    def on_post_process_file(self, req: falcon.Request, resp: falcon.Response) -> None:
        params = self._params(req)
        filename, data = params.upload()
        name = PurePosixPath(filename).name
        suffix = supported_format(name)
        default = f"{PurePosixPath(name).stem}{'' if suffix == '.ipynb' else '_processed'}.py"
        target = self._path(params.text("output") or default, "output")
        overwrite = params.flag("overwrite")
        text = self._bounded(
            process_upload,
            data,
            name,
            suffix == ".ipynb",
            unanalysable_status=falcon.HTTPUnprocessableEntity,
        )
        written = self._write(target.parent, {target.name: text.encode()}, overwrite)
        resp.media = {"status": "success", "output_path": written[0]}

    def on_post_containerize_file(self, req: falcon.Request, resp: falcon.Response) -> None:
        from svcc.compiler.writer import write_tree
        from svcc.contracts.target import FileTree
        from svcc.service.generators import containerfile, requirements_file, server_files

        params = self._params(req)
        filename = params.text("filename") or ""
        if not filename.strip():
            raise falcon.HTTPBadRequest(description="filename is empty")
        source = self._path(filename, "filename")
        output = self._path(params.required("output"), "output")
        version = params.text("python_version")
        try:
            conf = parse_configuration({} if version is None else {"python_version": version})
        except ConfigError as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None

        requirements = params.text("requirements")
        declared = None if not requirements else self._path(requirements, "requirements")
        try:
            files = self._bounded(
                bundle_files, source, filename, requirements=declared, select=params.text("select")
            )
        except IneligibleError as exc:  # the user's code: a 422 with the readiness reasons
            ineligible(resp, exc, self.workspace.shown)
            return
        except InputError as exc:  # the client named something that is not analysable
            raise falcon.HTTPBadRequest(
                title="Source not analysable", description=self.workspace.shown(str(exc))
            ) from None
        except UsageError as exc:  # an unknown selection, as the command line's exit 2
            raise falcon.HTTPBadRequest(description=self.workspace.shown(str(exc))) from None
        except SvccError as exc:  # the specification's "any other exception": 500
            raise falcon.HTTPInternalServerError(
                title="Containerization failed", description=self.workspace.shown(str(exc))
            ) from None
        # The bundle's own requirements.txt stays as its manifest says; the image installs a
        # superset (gunicorn and its uvicorn worker, and the declared application
        # requirements the readiness verdict counted on) from container-requirements.txt.
        conf = with_application_requirements(conf, files)
        files |= server_files(conf)
        files |= requirements_file(conf, CONTAINER_REQUIREMENTS)
        files |= containerfile(conf, CONTAINER_REQUIREMENTS)
        try:
            write_tree(FileTree.of(files), output)
        except OutputError as exc:
            raise falcon.HTTPConflict(description=self.workspace.shown(str(exc))) from None
        resp.media = {"status": "success", "output_path": self.workspace.relative(output)}

    # -- generation -------------------------------------------------------------------------
    def _conf(self, req: falcon.Request) -> ContainerizerConfiguration:
        body = read_body(req, MAX_CONF_BYTES, self.read_seconds)
        if body and media_type(req) != "application/json":
            raise falcon.HTTPUnsupportedMediaType(description="send conf as application/json")
        try:
            data = json.loads(body or b"{}")
        except RecursionError:
            raise falcon.HTTPBadRequest(description="conf is nested too deeply") from None
        except ValueError as exc:
            raise falcon.HTTPBadRequest(
                description=f"conf is not valid JSON: {str(exc)[:200]}"
            ) from None
        if isinstance(data, dict) and set(data) == {"conf"}:
            data = data["conf"]
        try:
            return parse_configuration(data)
        except ConfigError as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None

    def _generate(self, req: falcon.Request, resp: falcon.Response, kind: str) -> None:
        from svcc.service import generators

        overwrite = req.get_param_as_bool("overwrite") or False
        conf = self._conf(req)
        makers = {
            "server": generators.server_files,
            "requirements": generators.requirements_file,
            "containerfile": generators.containerfile,
        }
        files = makers[kind](conf)
        directory = self._path(conf.project_path, "project_path")
        written = self._write(directory, files, overwrite)
        resp.media = {
            "status": "success",
            "message": f"generated {', '.join(written)}",
            "files": written,
        }

    def on_post_generate_server_files(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._generate(req, resp, "server")

    def on_post_generate_requirements(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._generate(req, resp, "requirements")

    def on_post_generate_containerfile(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._generate(req, resp, "containerfile")

    def _write(self, directory: Path, files: dict[str, bytes], overwrite: bool) -> list[str]:
        try:
            return self.workspace.write_files(directory, files, overwrite=overwrite)
        except Exists as exc:
            raise falcon.HTTPConflict(description=str(exc)) from None
        except PathRefused as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None


def _unexpected(req: falcon.Request, _resp: falcon.Response, exc: Exception, _params: Any) -> None:
    if isinstance(exc, SvccError):
        raise falcon.HTTPBadRequest(description=str(exc))
    log.exception("unexpected error on %s %s", req.method, req.path)
    raise falcon.HTTPInternalServerError(description=f"{type(exc).__name__} (details are logged)")


ROUTES: Final = {
    "/analyze_file/": "analyze_file",
    "/analyse_directory/": "analyse_directory",
    "/process_file/": "process_file",
    "/containerize_file/": "containerize_file",
    "/generate_server_files/": "generate_server_files",
    "/generate_requirements/": "generate_requirements",
    "/generate_containerfile/": "generate_containerfile",
}


def create_app(
    workspace: str | Path = ".",
    *,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD,
    max_directory_files: int = DEFAULT_MAX_FILES,
    analysis_memory_bytes: int = DEFAULT_MEMORY,
    analysis_seconds: float = DEFAULT_SECONDS,
    read_seconds: float = DEFAULT_READ_SECONDS,
) -> "falcon.App[falcon.Request, falcon.Response]":
    app: falcon.App[falcon.Request, falcon.Response] = falcon.App()
    app.req_options.strip_url_path_trailing_slash = False
    multipart = falcon.media.MultipartFormHandler()
    multipart.parse_options.max_body_part_buffer_size = max_upload_bytes
    multipart.parse_options.max_body_part_count = 64
    app.req_options.media_handlers[falcon.MEDIA_MULTIPART] = multipart
    warm_up()
    budget = Budget(memory_bytes=analysis_memory_bytes, seconds=analysis_seconds)
    service = Service(
        Workspace(workspace),
        max_upload_bytes,
        max_directory_files,
        budget,
        multipart,
        read_seconds=read_seconds,
    )
    for route, suffix in ROUTES.items():
        app.add_route(route, service, suffix=suffix)
    app.add_error_handler(Exception, _unexpected)
    return app
