"""The HTTP analysis service: a Falcon WSGI application over the compiler's own passes.

``create_app(workspace=..., ...)`` builds it; any WSGI server can serve it (``svcc
serve-analysis`` runs it under gunicorn). Every route is ``POST`` with a trailing slash.
Scalar parameters come as multipart form fields, url-encoded fields or query parameters;
files as ``multipart/form-data``; ``conf`` as a JSON body (the object itself, or
``{"conf": {...}}``). Errors are JSON ``{"title", "description"}``, never a traceback. Every
client path is confined to the workspace; existing files are only replaced with
``overwrite=true``.
"""

import codecs
import json
import logging
from pathlib import Path, PurePosixPath
from typing import Any, Final

import falcon
from falcon.media.multipart import MultipartParseError
from svcc.compiler.errors import InputError, OutputError, SvccError
from svcc.service.config import ConfigError, ContainerizerConfiguration, parse_configuration
from svcc.service.workspace import Exists, PathRefused, Workspace

log = logging.getLogger("svcc.service")

DEFAULT_MAX_UPLOAD: Final = 16 * 1024 * 1024
DEFAULT_MAX_FILES: Final = 10_000
MAX_CONF_BYTES: Final = 1024 * 1024
CONTAINER_REQUIREMENTS: Final = "container-requirements.txt"


class Request:
    """The parameters of one request, from the form or the query string, read once."""

    def __init__(self, req: falcon.Request, max_upload: int) -> None:
        self.fields: dict[str, str] = {
            key: value if isinstance(value, str) else ",".join(value)
            for key, value in req.params.items()
        }
        self.file: tuple[str, bytes] | None = None
        if req.content_length and req.content_length > max_upload:
            raise falcon.HTTPContentTooLarge(
                description=f"the request body is over the {max_upload}-byte limit"
            )
        media = (req.content_type or "").split(";")[0].strip().lower()
        if media == "multipart/form-data":
            try:
                for part in req.get_media():
                    if part.filename is not None:
                        self.file = (part.filename, part.get_data())
                    else:
                        self.fields[part.name] = part.get_text() or ""
            except MultipartParseError as exc:
                if "exceed" in str(exc).lower() or "size" in str(exc).lower():
                    raise falcon.HTTPContentTooLarge(description=str(exc)) from None
                raise falcon.HTTPBadRequest(
                    description=f"malformed multipart body: {exc}"
                ) from None
        elif media == "application/x-www-form-urlencoded":
            self.fields.update({k: str(v) for k, v in req.get_media().items()})

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
        codecs.lookup(name)
    except LookupError:
        raise falcon.HTTPBadRequest(description=f"unknown encoding {name!r}") from None
    return name


def _python_version(value: str | None) -> str:
    from svcc.compiler.driver import version_tuple

    text = value or "3.8"
    try:
        version_tuple(text)
    except InputError as exc:
        raise falcon.HTTPBadRequest(description=str(exc)) from None
    return text


def _module_for(filename: str) -> str:
    stem = PurePosixPath(filename).stem
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in stem) or "module"
    return cleaned if not cleaned[0].isdigit() else f"m_{cleaned}"


class Service:
    def __init__(self, workspace: Workspace, max_upload: int, max_files: int) -> None:
        self.workspace = workspace
        self.max_upload = max_upload
        self.max_files = max_files

    def _params(self, req: falcon.Request) -> Request:
        return Request(req, self.max_upload)

    def _path(self, given: str, what: str) -> Path:
        try:
            return self.workspace.resolve(given, what)
        except PathRefused as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None

    # -- analysis ---------------------------------------------------------------------------
    def on_post_analyze_file(self, req: falcon.Request, resp: falcon.Response) -> None:
        from svcc.compiler.driver import analyze_source
        from svcc.service.analysis import apply_selection, result_document

        params = self._params(req)
        if params.file is None:
            raise falcon.HTTPBadRequest(description="file is required (multipart upload)")
        filename, data = params.file
        analysis = analyze_source(
            data,
            path=PurePosixPath(filename).name or "upload.py",
            module=_module_for(filename),
            python_version=_python_version(params.text("python_version")),
            encoding=_encoding(params.text("encoding")),
            source_format="python",
            check_name=False,
        )
        if analysis.error is not None:
            raise falcon.HTTPBadRequest(
                title="Source not analysable", description=analysis.error_message()
            )
        document = apply_selection(
            result_document(analysis),
            params.names("functions_to_analyze"),
            params.names("ignore") or [],
        )
        only = params.names("functions_to_analyze") or []
        known = {f["name"] for f in document["functions"]}
        unknown = [name for name in only if name not in known]
        if unknown:
            raise falcon.HTTPBadRequest(description=f"unknown function {unknown[0]!r}")
        resp.media = document

    def on_post_analyse_directory(self, req: falcon.Request, resp: falcon.Response) -> None:
        from svcc.compiler.driver import analyze_directory, python_files
        from svcc.service.analysis import apply_selection, result_document

        params = self._params(req)
        given = params.required("directory_path")
        directory = self._path(given, "directory_path")
        if not directory.is_dir():
            raise falcon.HTTPBadRequest(description=f"directory_path {given!r} is not a directory")
        count = len(python_files(directory))
        if count > self.max_files:
            raise falcon.HTTPBadRequest(
                description=f"{count} Python files is over the {self.max_files}-file limit"
            )
        only = params.names("functions_to_analyze")
        ignore = params.names("ignore") or []
        prefix = self.workspace.relative(directory)
        results = {}
        for rel, document in analyze_directory(
            directory,
            render=result_document,
            python_version=_python_version(params.text("python_version")),
            encoding=_encoding(params.text("encoding")),
        ):
            key = rel if prefix == "." else f"{prefix}/{rel}"
            results[key] = apply_selection(document, only, ignore)
        resp.media = results

    # -- processing ---------------------------------------------------------------------------
    def on_post_process_file(self, req: falcon.Request, resp: falcon.Response) -> None:
        from svcc.compiler.driver import SUFFIXES, analyze_source

        params = self._params(req)
        if params.file is None:
            raise falcon.HTTPBadRequest(description="file is required (multipart upload)")
        filename, data = params.file
        name = PurePosixPath(filename).name
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in SUFFIXES:
            raise falcon.HTTPBadRequest(
                title="Invalid file type",
                description=f"{name!r}: expected a .py file or a notebook",
            )
        analysis = analyze_source(
            data,
            path=name,
            module=_module_for(name),
            source_format=SUFFIXES[suffix],
            check_name=False,
        )
        if analysis.module_text is None:
            message = analysis.error_message() if analysis.error else "not processable"
            raise falcon.HTTPUnprocessableEntity(description=message)
        removed = sum(
            1 for d in analysis.diagnostics if d.code in ("SVC-F004", "SVC-F005", "SVC-F006")
        )
        header = f"# Processed by svcc from {name}"
        if suffix == ".ipynb":
            header += f" (notebook; {removed} magic or shell lines removed)"
        text = f"{header}\n{analysis.module_text}"
        default = f"{PurePosixPath(name).stem}{'' if suffix == '.ipynb' else '_processed'}.py"
        target = self._path(params.text("output") or default, "output")
        written = self._write(target.parent, {target.name: text.encode()}, params.flag("overwrite"))
        resp.media = {"status": "success", "output_path": written[0]}

    def on_post_containerize_file(self, req: falcon.Request, resp: falcon.Response) -> None:
        from svcc.compiler.driver import analyze_file, emit_analysis
        from svcc.compiler.registry import get_target
        from svcc.compiler.writer import write_tree
        from svcc.service.generators import containerfile, requirements_file, server_files

        params = self._params(req)
        filename = params.text("filename") or ""
        if not filename.strip():
            raise falcon.HTTPBadRequest(description="filename is empty")
        source = self._path(filename, "filename")
        output = self._path(params.required("output"), "output")
        conf = ContainerizerConfiguration()
        try:
            analysis = analyze_file(source, module_name=_module_for(source.name))
            if analysis.error is not None:
                raise InputError(analysis.error_message(filename))
            _, tree = emit_analysis(analysis, get_target("rest"))
        except SvccError as exc:
            raise falcon.HTTPInternalServerError(
                title="Containerization failed", description=str(exc)
            ) from None
        # The bundle's own requirements.txt stays as its manifest says; the image installs a
        # superset (gunicorn and its uvicorn worker) from container-requirements.txt.
        files = dict(tree)
        files |= server_files(conf)
        files |= requirements_file(conf, CONTAINER_REQUIREMENTS)
        files |= containerfile(conf, CONTAINER_REQUIREMENTS)
        from svcc.compiler.target import FileTree

        try:
            write_tree(FileTree.of(files), output)
        except OutputError as exc:
            raise falcon.HTTPConflict(description=str(exc)) from None
        resp.media = {"status": "success", "output_path": self.workspace.relative(output)}

    # -- generation -------------------------------------------------------------------------
    def _conf(self, req: falcon.Request) -> ContainerizerConfiguration:
        if req.content_length and req.content_length > MAX_CONF_BYTES:
            raise falcon.HTTPContentTooLarge(description="conf is over 1 MiB")
        media = (req.content_type or "").split(";")[0].strip().lower()
        if media != "application/json":
            raise falcon.HTTPUnsupportedMediaType(description="send conf as application/json")
        try:
            data = json.loads(req.bounded_stream.read(MAX_CONF_BYTES + 1) or b"{}")
        except ValueError as exc:
            raise falcon.HTTPBadRequest(description=f"conf is not valid JSON: {exc}") from None
        if isinstance(data, dict) and set(data) == {"conf"}:
            data = data["conf"]
        try:
            return parse_configuration(data)
        except ConfigError as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None

    def _generate(self, req: falcon.Request, resp: falcon.Response, kind: str) -> None:
        from svcc.service import generators

        conf = self._conf(req)
        makers = {
            "server": generators.server_files,
            "requirements": generators.requirements_file,
            "containerfile": generators.containerfile,
        }
        files = makers[kind](conf)
        directory = self._path(conf.project_path, "project_path")
        overwrite = req.get_param_as_bool("overwrite") or False
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
) -> "falcon.App[falcon.Request, falcon.Response]":
    app: falcon.App[falcon.Request, falcon.Response] = falcon.App()
    app.req_options.strip_url_path_trailing_slash = False
    multipart = falcon.media.MultipartFormHandler()
    multipart.parse_options.max_body_part_buffer_size = max_upload_bytes
    multipart.parse_options.max_body_part_count = 64
    app.req_options.media_handlers[falcon.MEDIA_MULTIPART] = multipart
    service = Service(Workspace(workspace), max_upload_bytes, max_directory_files)
    for route, suffix in ROUTES.items():
        app.add_route(route, service, suffix=suffix)
    app.add_error_handler(Exception, _unexpected)
    return app
