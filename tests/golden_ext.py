"""A syrupy extension that stores golden documents as real files beside their input.

``tests/golden/<case>/analysis/<name>.json``: reviewers open them like any file, and
``pytest --snapshot-update`` rewrites them. Documents are stored pretty-printed (the
canonical bytes are one line, which reviews badly); byte-level determinism is pinned
separately by ``test_determinism.py``.
"""

import json
import re
from typing import Any

from helpers import GOLDEN
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

_CASE = re.compile(r"test_golden\.py::test_golden\[([^\]]+)\]$")


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class GoldenJSON(SingleFileSnapshotExtension):
    file_extension = "json"
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        # syrupy asks about every test location at session end; only golden cases have a dir.
        match = _CASE.search(test_location.nodeid)
        return str(GOLDEN / (match.group(1) if match else "__no_case__") / "analysis")

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        return str(index)

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return data if isinstance(data, str) else pretty(data)
