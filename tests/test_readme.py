"""The README opens with the two commands, and CI runs exactly the test command."""

import re

from helpers import ROOT


def test_readme_commands_and_ci_agree() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.+?)\n```", readme, flags=re.S)
    assert len(blocks) >= 2
    setup_and_run, test_command = blocks[0], blocks[1]
    assert "svcc generate rest examples/shapes.py" in setup_and_run
    assert "svcc serve" in setup_and_run
    assert "pytest" in test_command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci
