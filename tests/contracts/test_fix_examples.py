"""Every before/after pair of ``docs/how-to/make-eligible.md`` does what it says: ``svcc inspect``
(in process) reports each code the "before" names, and none of them for the "after".

A pair is a ``python`` block whose first line is ``# before: ... SVC-Rnnn ...`` and which a
``# after`` line splits in two whole modules, each inspected as ``shop.py`` (a ``# file: NAME``
line starts a module beside it). A ``# svcc inspect shop.py ARGS`` line gives the options a
half is inspected with (``--data FILE`` files are created, ``--requirements FILE`` is written
from the ``# FILE: LINE`` comments); ``# svcc generate rest shop.py ARGS`` generates it instead
(an ``--execution-policy FILE`` is ``{}``), the codes read from its refusal."""

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


def _codes(folder: Path, source: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    """The codes ``svcc inspect`` (or the ``svcc generate`` line's command) reports."""
    folder.mkdir()
    files = re.split(r"^# file: (\S+)\n", source, flags=re.M)
    (folder / "shop.py").write_text(files[0])
    for name, text in zip(files[1::2], files[2::2], strict=True):
        (folder / name).write_text(text)
    command = ["inspect", "--format", "json"]
    for line in source.splitlines():
        found = re.match(r"# svcc (inspect|generate rest) shop\.py(.*)$", line)
        if found:
            command = [*found.group(1).split(), *shlex.split(found.group(2))]
    for index, (flag, name) in enumerate(itertools.pairwise(command)):
        if flag in {"--data", "--execution-policy"}:
            (folder / name).write_text("{}")
        elif flag == "--requirements":
            lines = re.findall(rf"^# {re.escape(name)}: (.+)$", source, flags=re.M)
            (folder / name).write_text("".join(f"{line}\n" for line in lines))
        elif flag != "--output-dir":
            continue
        command[index + 1] = str(folder / name)
    capsys.readouterr()
    status = main([*command, str(folder / "shop.py")])
    out, err = capsys.readouterr()
    if command[0] == "generate":  # refused (exit 1) naming the codes, or generated
        assert status in {0, 1}, err
        return set(_CODE.findall(err))
    assert status == 0, err
    report = json.loads(out)
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
    assert codes - _codes(tmp_path / "before", before, capsys) == set()
    assert codes & _codes(tmp_path / "after", after, capsys) == set()


def test_each_linked_code_has_a_pair_in_its_section() -> None:
    shown = pairs()
    missing = {
        code
        for code, anchor in FIX_EXAMPLES.items()
        if not any(code in codes for codes, _, _ in shown.get(anchor, []))
    }
    assert missing == set()
