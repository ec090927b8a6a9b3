import typing
import typing as t
from collections.abc import Mapping, Sequence
from typing import Dict, List, Optional, Tuple, Union


def legacy(a: List[int], b: Dict[str, int], c: Tuple[int, int]) -> Optional[int]:
    return None


def dotted(a: typing.List[str], b: t.Optional[t.Union[int, str]] = None) -> int:
    return 0


def abstract(seq: Sequence[float], mapping: Mapping[str, bool]) -> int:
    return len(seq) + len(mapping)


def unions(value: Union[int, str, None], other: Union[int, Union[str, int]]) -> str:
    return str(value)
