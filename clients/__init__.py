"""Client collections exported from a REST bundle: Postman, Bruno, Insomnia and ``.http``.

The exporter reads a generated REST bundle (never the user's source): its manifest is
re-hashed first, then ``openapi.json`` gives the routes and request schemas and
``capability-ir.json`` says which parameters have defaults. Every request body is an
example derived from the request schema and checked by the bundle's own validator
(``svc_runtime/validation.py``) before anything is written. The output folder holds the
collection and ``svc-clients.json``, the export record that lets :func:`sync_collection`
regenerate the folder without ever overwriting a file the user edited.
"""

from svcc.clients._collection import DEFAULT_BASE_URL
from svcc.clients._export import (
    FORMATS,
    ExportOptions,
    ExportResult,
    SyncConflict,
    export_collection,
    sync_collection,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "FORMATS",
    "ExportOptions",
    "ExportResult",
    "SyncConflict",
    "export_collection",
    "sync_collection",
]
