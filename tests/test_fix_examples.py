"""Every before/after pair of ``docs/how-to/make-eligible.md`` does what it says: ``svcc inspect``
(in process) reports each code the "before" names, and none of them for the "after".

A pair is a ``python`` block whose first line is ``# before: ... SVC-Rnnn ...`` and which a
``# after`` line splits in two whole modules, each inspected as ``app.py`` (a ``# file: NAME``
line starts a module beside it). In the "after", a
``# svcc inspect app.py ARGS`` line gives the options it is inspected with (``--data FILE``
files are created, ``--requirements FILE`` is written from the ``# FILE: LINE`` comments)."""

import itertools
import json
import re
import shlex
from pathlib import Path

import pytest
from helpers import ROOT
from svcc.cli.main import main
from svcc.contracts.diagnostics.codes import FIX_EXAMPLES

PAGE = ROOT / "docs" / "how-to" / "make-eligible.md"
_CODE = re.compile(r"SVC-[RF]\d{3}")
_SECTION = re.compile(r"^## .*\{ #([a-z0-9-]+) \}$", re.M)


def pairs() -> dict[str, list[tuple[set[str], str, str]]]:
    """``(codes, before, after)`` of each pair, by the anchor of the section holding it."""
    text = PAGE.read_text()
    heads = list(_SECTION.finditer(text))
    out: dict[str, list[tuple[set[str], str, str]]] = {}
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        body = text[head.end() : following.start() if following else len(text)]
        for block in re.findall(r"^```python\n(.*?)^```", body, flags=re.M | re.S):
            first = block.split("\n", 1)[0]
            if not first.startswith("# before:"):
                continue
            before, after = re.split(r"^# after.*\n", block, maxsplit=1, flags=re.M)
            out.setdefault(head.group(1), []).append((set(_CODE.findall(first)), before, after))
    return out


PAIRS = [(anchor, *pair) for anchor, found in pairs().items() for pair in found]


def _inspect(folder: Path, source: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    folder.mkdir()
    files = re.split(r"^# file: (\S+)\n", source, flags=re.M)
    (folder / "app.py").write_text(files[0])
    for name, text in zip(files[1::2], files[2::2], strict=True):
        (folder / name).write_text(text)
    args: list[str] = []
    for line in source.splitlines():
        if line.startswith("# svcc inspect app.py"):
            args = shlex.split(line.removeprefix("# svcc inspect app.py"))
    for index, (flag, name) in enumerate(itertools.pairwise(args)):
        if flag == "--data":
            (folder / name).write_text("{}")
        elif flag == "--requirements":
            lines = re.findall(rf"^# {re.escape(name)}: (.+)$", source, flags=re.M)
            (folder / name).write_text("".join(f"{line}\n" for line in lines))
        else:
            continue
        args[index + 1] = str(folder / name)
    capsys.readouterr()
    assert main(["inspect", str(folder / "app.py"), "--format", "json", *args]) == 0
    report = json.loads(capsys.readouterr().out)
    found = {d["code"] for d in report["diagnostics"]}
    for assessment in report["assessments"]:
        found |= {r["code"] for r in assessment["reasons"]}
    return found


@pytest.mark.parametrize("pair", PAIRS, ids=[sorted(p[1])[0] for p in PAIRS])
def test_before_shows_its_codes_and_after_none(
    pair: tuple[str, set[str], str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    anchor, codes, before, after = pair
    assert codes, anchor
    assert codes - _inspect(tmp_path / "before", before, capsys) == set()
    assert codes & _inspect(tmp_path / "after", after, capsys) == set()


def test_each_linked_code_has_a_pair_in_its_section() -> None:
    shown = pairs()
    missing = {
        code
        for code, anchor in FIX_EXAMPLES.items()
        if not any(code in codes for codes, _, _ in shown.get(anchor, []))
    }
    assert missing == set()
