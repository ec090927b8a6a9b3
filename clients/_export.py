"""``export`` (a new folder) and ``sync`` (regenerate a folder the export record owns)."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from svcc.clients._build import build_collection
from svcc.clients._bundle import RestBundle, load_rest_bundle
from svcc.clients._collection import DEFAULT_BASE_URL, check_base_url, check_name
from svcc.clients._folder import MISSING, NOT_A_FILE, Folder
from svcc.clients._formats import RENDERERS
from svcc.clients._record import (
    MAX_RECORD_BYTES,
    RECORD,
    ExportRecord,
    digest,
    parse_record,
    record_of,
)
from svcc.contracts.errors import ExitCode, InputError, OutputError, SvccError, UsageError
from svcc.contracts.target import FileTree

FORMATS: Final = tuple(RENDERERS)
MAX_FILE_BYTES: Final = 16 * 1024 * 1024


class SyncConflict(SvccError):
    """A file sync would have to overwrite or remove is not svcc's any more (exit 1)."""

    exit_code = ExitCode.INELIGIBLE


@frozen(kw_only=True)
class ExportOptions:
    format: str
    base_url: str = DEFAULT_BASE_URL
    name: str | None = None  # default: the bundle's module name


@frozen(kw_only=True)
class ExportResult:
    output_dir: Path
    format: str
    bundle_digest: str
    requests: int
    written: tuple[str, ...]
    removed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "output_dir": str(self.output_dir),
            "format": self.format,
            "bundle_digest": self.bundle_digest,
            "requests": self.requests,
            "written": list(self.written),
            "removed": list(self.removed),
            "unchanged": list(self.unchanged),
        }


def _render(bundle: RestBundle, options: ExportOptions) -> tuple[dict[str, bytes], ExportRecord]:
    if options.format not in RENDERERS:
        raise UsageError(f"unknown format {options.format!r} (choose from {', '.join(FORMATS)})")
    base_url = check_base_url(options.base_url)
    if options.name is not None:
        name = check_name(options.name)
    else:
        try:
            name = check_name(bundle.module)
        except UsageError:
            raise UsageError(
                f"the bundle's module name {bundle.module[:120]!r} cannot name a collection; "
                "pass --name NAME"
            ) from None
    collection = build_collection(bundle, base_url=base_url, name=name)
    files = RENDERERS[options.format](collection)
    for path, data in files.items():
        if len(data) > MAX_FILE_BYTES:
            raise InputError(f"{path} would be over {MAX_FILE_BYTES} bytes; not written")
    record = record_of(
        files,
        bundle_digest=bundle.manifest_digest,
        module=bundle.module,
        format=options.format,
        base_url=base_url,
        name=name,
    )
    return files, record


def export_collection(
    bundle_dir: str | Path, output_dir: str | Path, options: ExportOptions
) -> ExportResult:
    """Write the collection and its record into a new or empty ``output_dir``, all at once."""
    from svcc.compiler.writer import write_tree

    out = Path(output_dir)
    if (out / RECORD).exists():
        raise OutputError(
            f"{out}: already holds an export ({RECORD}); regenerate it with `svc clients sync`"
        )
    bundle = load_rest_bundle(bundle_dir)
    files, record = _render(bundle, options)
    tree = FileTree.of({**files, RECORD: record.to_bytes()})
    written = write_tree(tree, out)
    return ExportResult(
        output_dir=written,
        format=options.format,
        bundle_digest=bundle.manifest_digest,
        requests=len(bundle.capabilities) + 1,
        written=tuple(sorted([*files, RECORD])),
    )


def _plan(
    folder: Folder, old: Mapping[str, str], new: Mapping[str, bytes]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """``(write, remove, unchanged, conflicts)``; conflicts read ``path (why)``."""
    write: list[str] = []
    remove: list[str] = []
    unchanged: list[str] = []
    conflicts: list[str] = []
    for path in sorted(set(old) | set(new)):
        state = folder.read(path, MAX_FILE_BYTES)
        if path in new:
            if state == MISSING:
                write.append(path)
            elif not isinstance(state, bytes):
                conflicts.append(f"{path} (not a regular file)")
            elif state == new[path]:
                unchanged.append(path)
            elif path not in old:
                conflicts.append(f"{path} (exists and was not written by the export)")
            elif digest(state) == old[path]:
                write.append(path)
            else:
                conflicts.append(f"{path} (edited since the export)")
        elif isinstance(state, bytes):
            if digest(state) == old[path]:
                remove.append(path)
            else:
                conflicts.append(f"{path} (edited since the export, and no longer generated)")
    return write, remove, unchanged, conflicts


def sync_collection(
    output_dir: str | Path,
    bundle_dir: str | Path,
    *,
    base_url: str | None = None,
    name: str | None = None,
) -> ExportResult:
    """Regenerate an export folder from ``bundle_dir`` without touching the user's files.

    The format and options come from the record (``base_url``/``name`` override them). A
    file the record owns is replaced or removed only if its bytes still hash to the record;
    a file the user edited, or one the export never wrote, is a conflict: nothing at all is
    written and the error names every such file. Unrelated files are left alone.
    """
    out = Path(output_dir)
    folder = Folder(out)
    try:
        raw = folder.read(RECORD, MAX_RECORD_BYTES)
        if raw == MISSING:
            raise InputError(
                f"{out}: no {RECORD}; not an export folder (create one with `svc clients export`)"
            )
        if raw == NOT_A_FILE:
            raise InputError(
                f"{out / RECORD}: not a regular file (or over {MAX_RECORD_BYTES} bytes)"
            )
        assert isinstance(raw, bytes)
        record = parse_record(raw, out, FORMATS)
        bundle = load_rest_bundle(bundle_dir)
        options = ExportOptions(
            format=record.format,
            base_url=base_url if base_url is not None else record.base_url,
            name=name if name is not None else record.name,
        )
        files, new_record = _render(bundle, options)
        write, remove, unchanged, conflicts = _plan(folder, record.files, files)
        if conflicts:
            listed = "; ".join(conflicts)
            raise SyncConflict(
                f"{out}: nothing written: {len(conflicts)} file(s) are not svcc's to replace: "
                f"{listed} (move them away, or restore them, and sync again)"
            )
        for path in write:
            folder.write(path, files[path])
        for path in remove:
            folder.remove(path)
        record_bytes = new_record.to_bytes()
        if record_bytes != raw:
            folder.write(RECORD, record_bytes)
    except OSError as exc:
        raise OutputError(f"{out}: sync failed: {exc.strerror or exc}") from None
    finally:
        folder.close()
    return ExportResult(
        output_dir=out.resolve(),
        format=record.format,
        bundle_digest=bundle.manifest_digest,
        requests=len(bundle.capabilities) + 1,
        written=tuple(write),
        removed=tuple(remove),
        unchanged=tuple(unchanged),
    )
