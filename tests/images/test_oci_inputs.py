"""The wheel lock and image-reference grammars, the lock-vs-requirements check, bundle input."""

import json
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from svcc.images.errors import CODES, ImageInputError
from svcc.images.lockfile import MAX_LOCK_BYTES, MAX_WHEELS, parse_lock, render_lock
from svcc.images.reference import parse_reference
from svcc.images.resolve import marker_environment, parse_requirement_lines, resolve

H = "a" * 64
G = "b" * 64


def refused(data: bytes) -> str:
    with pytest.raises(ImageInputError) as info:
        parse_lock(data, "lock.txt")
    assert info.value.code == "lock_invalid"
    return info.value.message


def test_lock_accepts_pins_comments_and_continuations() -> None:
    lock = parse_lock(
        f"# generated\n\nFastAPI==0.115.0 --hash=sha256:{H}  # web\n"
        f"typing_extensions==4.12.2 \\\n    --hash=sha256:{G.upper()}\n".encode()
    )
    assert [(w.name, w.version, w.sha256, w.line) for w in lock.wheels] == [
        ("fastapi", "0.115.0", H, 3),
        ("typing-extensions", "4.12.2", G, 4),
    ]
    assert (
        render_lock(lock.wheels).splitlines()[0] == f"fastapi==0.115.0 --hash=sha256:{H}".encode()
    )


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("-r other.txt", "1:1", "includes"),
        ("--requirement=other.txt", "1:1", "includes"),
        ("-c constraints.txt", "1:1", "constraint"),
        ("-e .", "1:1", "editable"),
        ("--editable ./pkg", "1:1", "editable"),
        ("--index-url https://pypi.example/simple", "1:1", "index options"),
        ("--extra-index-url https://x", "1:1", "index options"),
        ("--find-links /wheels", "1:1", "index options"),
        ("https://files.example/x-1-py3-none-any.whl", "1:1", "URLs"),
        (f"x @ https://files.example/x.whl --hash=sha256:{H}", "1:3", "URLs"),
        ("./wheels/x-1-py3-none-any.whl", "1:1", "paths"),
        ("/abs/x.whl", "1:1", "paths"),
        ("x-1-py3-none-any.whl", "1:1", "paths"),
        (f"x[extra]==1 --hash=sha256:{H}", "1:2", "extras"),
        (f'x==1 ; python_version > "3" --hash=sha256:{H}', "1:6", "markers"),
        (f"x>=1 --hash=sha256:{H}", "1:2", "pin one version"),
        (f"x==1.* --hash=sha256:{H}", "1:2", "pin one version"),
        (f"x --hash=sha256:{H}", "1:1", "not pinned"),
        ("x==1", "1:1", "no --hash"),
        ("x==1 --hash=md5:abc", "1:6", "sha256:<64"),
        (f"x==1 --hash=sha256:{H[:-1]}", "1:6", "sha256:<64"),
        (f"x==1 --hash=sha256:{H} --hash=sha256:{G}", "1:", "one SHA-256"),
        (f"x==1 --hash=sha256:{H}\nX==2 --hash=sha256:{G}", "2:1", "locked twice"),
        (f"\n\n  x==1 --hash=sha256:{H} y", "3:", "not a `name==version"),
        (f"x==not-a-version! --hash=sha256:{H}", "1:", ""),
    ],
)
def test_lock_refusals_name_the_construct_line_and_column(
    text: str, where: str, words: str
) -> None:
    message = refused(text.encode())
    assert message.startswith(f"lock.txt:{where}"), message
    assert words in message


def test_lock_limits() -> None:
    assert "limit" in refused(b"#" * (MAX_LOCK_BYTES + 1))
    many = "".join(f"p{i}==1 --hash=sha256:{H}\n" for i in range(MAX_WHEELS + 1))
    assert f"limit of {MAX_WHEELS}" in refused(many.encode())
    assert "no wheels" in refused(b"# nothing\n")
    assert "UTF-8" in refused(b"\xff")


@pytest.mark.parametrize(
    "text",
    [
        "registry.test:5443/team/service:1.0",
        "localhost/team/service:v1",
        "registry.example.com/a/b/c:tag_1.2-x",
        f"registry.test:5444/ci/base:bookworm@sha256:{H}",
    ],
)
def test_references_accepted(text: str) -> None:
    ref = parse_reference(text, require_tag=True)
    assert str(ref) == text


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("https://registry.test/a/b:t", "schemes"),
        ("oci://registry.test/a/b:t", "schemes"),
        ("user:secret@registry.test/a/b:t", "credentials"),
        ("127.0.0.1:5000/a/b:t", "IP literals"),
        ("[::1]:5000/a/b:t", "IP literals"),
        ("registry.test/a/b", "explicit tag"),
        ("registry.test/image:t", "malformed"),
        ("team/service:t", "malformed"),
        ("registry.test/A/b:t", "malformed"),
        ("registry.test:99999/a/b:t", "out of range"),
        (f"registry.test/a/b@md5:{H}", "sha256"),
        ("registry.test/a/b@sha256:abc", "sha256"),
    ],
)
def test_references_refused(text: str, words: str) -> None:
    with pytest.raises(ImageInputError) as info:
        parse_reference(text, require_tag=True)
    assert info.value.code == "reference_invalid"
    assert words in info.value.message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # lark's end-of-input error has no column: this said "malformed at column -1"
        ("nope", "malformed: ends early; expected REGISTRY[:PORT]/NAMESPACE/IMAGE"),
        ("", "malformed: ends early"),
        ("registry.test/a/b:", "malformed: ends early"),
        ("registry.test/a/B:t", "malformed: unexpected 'B' at column 17; expected REGISTRY"),
        ("registry.test/a/b:t\nx", "malformed: unexpected '\\n' at column 20"),
    ],
)
def test_a_malformed_reference_says_where_and_what_was_expected(text: str, reason: str) -> None:
    with pytest.raises(ImageInputError) as info:
        parse_reference(text, what="--image", require_digest=True)
    assert info.value.code == "reference_invalid"
    assert info.value.message.startswith(f"--image {text!r}: ")
    assert reason in info.value.message
    assert "column -1" not in info.value.message
    assert "\n" not in info.value.message


def test_base_must_be_pinned() -> None:
    with pytest.raises(ImageInputError) as info:
        parse_reference("registry.test:5444/ci/base:bookworm", require_digest=True)
    assert info.value.code == "base_not_pinned"
    ref = parse_reference(f"registry.test:5444/ci/base@sha256:{H}", require_digest=True)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (
        "registry.test:5444",
        "ci/base",
        None,
        f"sha256:{H}",
    )


REQUIRES = {
    "fastapi": ["starlette<1,>=0.40", "pydantic>=2", 'email-validator; extra == "all"'],
    "starlette": ["anyio<5,>=3.4"],
    "anyio": ["idna>=2.8", 'exceptiongroup; python_version < "3.11"'],
    "idna": [],
    "pydantic": [],
    "uvloop": [],
}
ENV = marker_environment("linux/amd64", "3.11")


def lock_of(*pins: str) -> bytes:
    return "".join(f"{p} --hash=sha256:{H}\n" for p in pins).encode()


def run_resolve(lock: bytes, roots: list[str]) -> None:
    resolve(
        parse_lock(lock),
        [Requirement(r) for r in roots],
        lambda w: REQUIRES[w.name],
        ENV,
    )


def test_resolution_equal_sets_pass() -> None:
    run_resolve(
        lock_of(
            "fastapi==0.115.0", "starlette==0.41.0", "anyio==4.4", "idna==3.7", "pydantic==2.9.0"
        ),
        ["fastapi>=0.115,<1"],
    )


def test_resolution_names_missing_extra_and_unsatisfied() -> None:
    full = ["fastapi==0.115.0", "starlette==0.41.0", "anyio==4.4", "idna==3.7", "pydantic==2.9.0"]
    with pytest.raises(ImageInputError, match="missing from the lock: idna"):
        run_resolve(lock_of(*full[:3], full[4]), ["fastapi"])
    with pytest.raises(ImageInputError, match=r"not required .*: uvloop"):
        run_resolve(lock_of(*full, "uvloop==0.20"), ["fastapi"])
    with pytest.raises(ImageInputError, match=r"starlette==1.0 in the lock does not satisfy"):
        run_resolve(lock_of(full[0], "starlette==1.0", *full[2:]), ["fastapi"])
    # an extra asked for pulls its requirements in; markers for other Pythons do not
    with pytest.raises(ImageInputError, match="missing from the lock: email-validator"):
        run_resolve(lock_of(*full), ["fastapi[all]"])


def test_every_code_is_documented_with_a_cause_and_a_remedy() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "oci.md").read_text()
    rows = {
        line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
        for line in doc.split("## Error codes", 1)[1].split("\n## ", 1)[0].splitlines()
        if line.startswith("| `")
    }
    assert set(rows) == {f"`{code}`" for code in CODES}
    for code, cells in rows.items():
        assert len(cells) == 2, code
        assert all(len(cell) > 10 for cell in cells), code
    assert json.dumps(sorted(CODES))  # the table is plain data


def test_an_invalid_requirement_is_one_line() -> None:
    """packaging's message is three lines (the requirement, then a caret under it)."""
    with pytest.raises(ImageInputError) as info:
        parse_requirement_lines(["fastapi", "numpy >>= 1"], "bundle")
    assert info.value.message == (
        "bundle:2: invalid requirement: Expected semicolon (after name with no version "
        "specifier) or end at column 7"
    )
    requires = {**REQUIRES, "idna": ["pandas[x"]}
    with pytest.raises(ImageInputError) as info:
        resolve(
            parse_lock(
                lock_of(
                    "fastapi==0.115.0",
                    "starlette==0.41.0",
                    "anyio==4.4",
                    "idna==3.7",
                    "pydantic==2.9.0",
                )
            ),
            [Requirement("fastapi")],
            lambda w: requires[w.name],
            ENV,
        )
    assert info.value.code == "wheel_invalid"
    assert info.value.message == (
        "idna: bad Requires-Dist 'pandas[x': Expected matching RIGHT_BRACKET for LEFT_BRACKET, "
        "after extras at column 9"
    )
