"""How an input is analysed: one record of options for every front end.

The CLI's flags (``svcc inspect``/``compile``), the analysis service's query and the
language server's settings all come down to these fields; :func:`svcc.compiler.driver.analyze`
takes them as one value, so a new option is one field here, read where it matters.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from svcc.ir.model import SourceFormat

if TYPE_CHECKING:
    from pathlib import Path

    from attrs import field, frozen
    from svcc.contracts.requirements import DeclaredRequirements
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import field, frozen


def _tuple(value: Sequence[str]) -> tuple[str, ...]:
    return tuple(value)


def _optional_tuple(value: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@frozen(kw_only=True)
class AnalyzeOptions:
    """Options of :func:`~svcc.compiler.driver.analyze`, every one with its default.

    ``source``: the input held in memory (the path is then its display name; its format is
    ``source_format`` or the suffix's; its module name is checked unless ``check_name`` is
    false). ``strict``, ``workers``, ``folder_name``, ``documents``, ``include_tests`` and
    ``notebooks`` apply to a directory; ``module_name``, ``data``, ``display_path``,
    ``facts_cache`` and ``select`` to a file or notebook; the rest to every input (see
    ``analyze_source``, ``analyze_file`` and ``analyze_repository`` for their meaning)."""

    source: bytes | str | None = None
    source_format: SourceFormat | None = None
    check_name: bool = True
    module_name: str | None = None
    python_version: str | tuple[int, int] | None = None
    requirements: "DeclaredRequirements | None" = None
    encoding: str | None = None
    governed: bool = False
    allow: frozenset[str] = frozenset()
    data: tuple[str, ...] = field(default=(), converter=_tuple)
    strict: bool = True
    workers: int | None = 1
    folder_name: str | None = None
    serialize: bool = True
    display_path: str | None = None
    # shared by the files of one directory analysis: compared by identity
    facts_cache: dict[str, Any] | None = field(default=None, eq=False)
    # the modules' documents rendered by the workers that judged them, for ``inspect DIR
    # --format json``: the analysis then holds no report a worker judged (reading one is
    # an error), only the documents (``Analysis.rendered``) and which modules failed
    documents: bool = False
    select: tuple[str, ...] | None = field(default=None, converter=_optional_tuple)
    include_tests: bool = False
    # A directory: also analyse the notebooks below it, each as ``inspect FILE`` would
    # (:attr:`~svcc.compiler.driver.Analysis.notebooks`).
    notebooks: bool = False


@frozen(kw_only=True)
class CompileOptions:
    """Options of :func:`~svcc.compiler.pipeline.compile_path` besides the target and the
    output directory: how the input is read (``module_name``, ``python_version``,
    ``requirements``, ``allow``, ``data``, ``include_tests``), what is selected
    (``select``: ``--select``'s text), the target's own options (``target_options``), the
    governed execution (``execution_policy``, ``runtime_image``, ``runtime_platform``) and
    ``servable_only`` (``svcc generate``: a target that writes no service is refused)."""

    module_name: str | None = None
    select: str | None = None
    python_version: str | tuple[int, int] | None = None
    requirements: "DeclaredRequirements | None" = None
    execution_policy: "str | Path | None" = None
    target_options: Mapping[str, object] | None = None
    servable_only: bool = False
    runtime_image: str | None = None
    runtime_platform: str | None = None
    allow: frozenset[str] = frozenset()
    data: tuple[str, ...] = field(default=(), converter=_tuple)
    include_tests: bool = False
