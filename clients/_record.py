"""``svc-clients.json``: the export record that makes a folder safe to regenerate.

It holds the bundle's manifest digest, the format, the options and the sha256 of every
file the export wrote. A file whose bytes still hash to the record is svcc's to replace
or remove; anything else (a file the user edited, one the export never wrote, a symlink)
is the user's and is never touched.
"""

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from svcc.contracts.errors import InputError

from svcc import __version__

RECORD: Final = "svc-clients.json"
RECORD_SCHEMA: Final = "svc.clients-export/v1"
MAX_RECORD_BYTES: Final = 1024 * 1024
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@frozen(kw_only=True)
class ExportRecord:
    bundle_digest: str
    module: str
    format: str
    base_url: str
    name: str
    files: Mapping[str, str]  # relative POSIX path -> sha256 digest

    def to_bytes(self) -> bytes:
        document = {
            "schema": RECORD_SCHEMA,
            "generator": {"name": "svcc", "version": __version__},
            "bundle": {"manifest_digest": self.bundle_digest, "module": self.module},
            "format": self.format,
            "options": {"base_url": self.base_url, "name": self.name},
            "files": dict(sorted(self.files.items())),
        }
        return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def safe_relpath(path: object) -> bool:
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path:
        return False
    return all(p not in ("", ".", "..") for p in path.split("/")) and path != RECORD


def parse_record(data: bytes, where: Path, formats: tuple[str, ...]) -> ExportRecord:
    """The record's fields, each checked (a malformed record is an input error, exit 2)."""
    problem = f"{where / RECORD} is not a {RECORD_SCHEMA} record"
    try:
        doc = json.loads(data)
    except ValueError:
        raise InputError(f"{problem} (not valid JSON)") from None
    if not isinstance(doc, dict) or doc.get("schema") != RECORD_SCHEMA:
        raise InputError(problem)
    bundle, options, files = doc.get("bundle"), doc.get("options"), doc.get("files")
    fmt = doc.get("format")
    ok = (
        isinstance(bundle, dict)
        and isinstance(bundle.get("manifest_digest"), str)
        and isinstance(bundle.get("module"), str)
        and isinstance(options, dict)
        and isinstance(options.get("base_url"), str)
        and isinstance(options.get("name"), str)
        and fmt in formats
        and isinstance(files, dict)
    )
    if not ok:
        raise InputError(f"{problem} (fields missing or of the wrong type)")
    assert isinstance(bundle, dict)
    assert isinstance(options, dict)
    assert isinstance(files, dict)
    for path, value in files.items():
        if not safe_relpath(path) or not isinstance(value, str) or not _DIGEST.fullmatch(value):
            raise InputError(f"{problem} (bad file entry {str(path)[:200]!r})")
    return ExportRecord(
        bundle_digest=bundle["manifest_digest"],
        module=bundle["module"],
        format=str(fmt),
        base_url=options["base_url"],
        name=options["name"],
        files=dict(files),
    )


def record_of(files: Mapping[str, bytes], **fields: Any) -> ExportRecord:
    return ExportRecord(files={p: digest(d) for p, d in files.items()}, **fields)
