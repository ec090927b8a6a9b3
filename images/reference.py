"""Image references, parsed with a lark grammar (``reference.lark``), never with regexes.

``<registry>[:<port>]/<namespace>/<image>[:<tag>][@sha256:<hex>]``. The registry is always
explicit and a DNS name (``localhost`` included); IP literals, URL schemes and credentials are
refused. What else a use requires (a digest for a base, a tag for a destination) is a keyword
of ``parse_reference``, so each rule is checked in one place.
"""

from functools import cache
from importlib import resources
from typing import Final

from attrs import frozen
from lark import Lark, Token, Tree, UnexpectedInput
from svcc.images.errors import ImageInputError

MAX_REFERENCE_LENGTH: Final = 1024
# The shape every refusal of the grammar names (what the user should have written).
SHAPE: Final = "REGISTRY[:PORT]/NAMESPACE/IMAGE[:TAG][@sha256:DIGEST]"


@frozen
class ImageReference:
    registry: str  # host[:port]
    repository: str  # namespace/.../image
    tag: str | None
    digest: str | None  # "sha256:<64 hex>"

    def __str__(self) -> str:
        text = f"{self.registry}/{self.repository}"
        if self.tag is not None:
            text += f":{self.tag}"
        if self.digest is not None:
            text += f"@{self.digest}"
        return text


@cache
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("reference.lark").read_text()
    return Lark(grammar, parser="earley", lexer="dynamic", ambiguity="resolve")


def _bad(what: str, text: str, message: str) -> ImageInputError:
    return ImageInputError("reference_invalid", f"{what} {text!r}: {message}")


def _malformed(text: str, exc: UnexpectedInput) -> str:
    """The grammar's refusal in words (lark's end-of-input error has no column: -1)."""
    at = getattr(exc, "pos_in_stream", None)  # counted over the whole text, newlines too
    if not isinstance(at, int) or not 0 <= at < len(text):
        return f"malformed: ends early; expected {SHAPE}"
    return f"malformed: unexpected {text[at]!r} at column {at + 1}; expected {SHAPE}"


def _tokens(tree: Tree[Token]) -> list[str]:
    return [str(t) for t in tree.scan_values(lambda v: isinstance(v, Token))]


def parse_reference(
    text: str,
    *,
    what: str = "image reference",
    require_digest: bool = False,
    require_tag: bool = False,
) -> ImageReference:
    """The reference in ``text``. ``require_digest``: a base image (``base_not_pinned``);
    ``require_tag``: a destination (implicit ``latest`` refused)."""
    if len(text) > MAX_REFERENCE_LENGTH:
        raise _bad(what, text[:40] + "...", f"longer than {MAX_REFERENCE_LENGTH} characters")
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _bad(what, text, _malformed(text, exc)) from None
    top = tree.children[0] if tree.data == "start" else tree
    if tree.data == "scheme":
        raise _bad(what, text, "URL schemes are refused: write registry/namespace/image")
    if tree.data == "credentials":
        raise _bad(what, text, "credentials in references are refused")
    assert isinstance(top, Tree)
    registry = tag = digest = None
    repository = ""
    for part in top.children:
        assert isinstance(part, Tree)
        if part.data == "domain":
            registry = _registry(part, what, text)
        elif part.data == "repo_path":
            repository = "/".join(_tokens(part))
        elif part.data == "tag":
            tag = _tokens(part)[0]
        elif part.data == "digest":
            algorithm, encoded = _tokens(part)
            if algorithm != "sha256" or len(encoded) != 64 or encoded.strip("0123456789abcdef"):
                raise _bad(what, text, "the digest must be sha256:<64 lowercase hex digits>")
            digest = f"sha256:{encoded}"
    assert registry is not None
    if require_digest and digest is None:
        raise ImageInputError(
            "base_not_pinned", f"{what} {text!r}: not pinned: add @sha256:<digest>"
        )
    if require_tag and tag is None:
        raise _bad(what, text, "an explicit tag is required (no implicit latest)")
    return ImageReference(registry, repository, tag, digest)


def _registry(part: Tree[Token], what: str, text: str) -> str:
    """The registry of a reference's domain part: a DNS name (or ``localhost``) and an
    optional port; IP literals and a bare single label are refused."""
    host = part.children[0]
    assert isinstance(host, Tree)
    if host.data == "ipv6":
        raise _bad(what, text, "IP literals are refused: use the registry's DNS name")
    labels = _tokens(host)
    if all(label.isdigit() for label in labels):
        raise _bad(what, text, "IP literals are refused: use the registry's DNS name")
    if len(labels) == 1 and labels[0] != "localhost" and len(part.children) == 1:
        raise _bad(what, text, "the registry must be explicit (a DNS name with a dot, or a port)")
    registry = ".".join(labels)
    if len(part.children) > 1:
        port = _tokens(part.children[1])[0]  # type: ignore[arg-type]
        if not 0 < int(port) < 65536:
            raise _bad(what, text, f"port {port} out of range")
        registry += f":{port}"
    return registry
