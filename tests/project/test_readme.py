"""The README is the front door: the two commands first (CI runs exactly the test command),
at most 12 KB, and a link to the manual's page for what a newcomer looks for first. Its
command blocks run with the manual's (tests/project/test_docs.py)."""

import re

from helpers import ROOT

README = ROOT / "README.md"


def test_readme_commands_and_ci_agree() -> None:
    readme = README.read_text()
    blocks = re.findall(r"```sh\n(.+?)\n```", readme, flags=re.S)
    assert len(blocks) >= 2
    setup_and_run, test_command = blocks[0], blocks[1]
    assert readme.index(setup_and_run) < readme.index("\n## ")  # first, before any section
    assert "svcc generate rest examples/shapes.py" in setup_and_run
    assert "svcc serve" in setup_and_run
    assert "pytest" in test_command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci


def test_readme_is_a_front_door() -> None:
    assert len(README.read_bytes()) <= 12 * 1024
    assert "load average" not in README.read_text()  # figures live on the performance page


# What a newcomer looks for, and the page that answers it (two clicks at most: one link).
FIRST_QUESTIONS = {
    "serving some functions": "docs/how-to/select.md",
    "data files": "docs/how-to/data-files.md",
    "tokens": "docs/how-to/network.md",
    "building an image": "docs/how-to/image.md",
    "what a diagnostic code means": "docs/diagnostics.md",
}


def test_readme_links_to_the_pages_newcomers_need() -> None:
    links = set(re.findall(r"\]\(([^)#\s]+)", README.read_text()))
    missing = {q: page for q, page in FIRST_QUESTIONS.items() if page not in links}
    assert missing == {}
    for link in links:
        if not link.startswith(("http://", "https://")):
            assert (ROOT / link).exists(), link
