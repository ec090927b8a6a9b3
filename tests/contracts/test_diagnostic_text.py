"""``Diagnostic.json_text`` is ``ENCODER.encode(to_json())`` written directly: the same
text for every code, span shape and message a diagnostic can carry (quotes, backslashes,
control characters, non-ASCII, lone surrogates, a hint of its own or its code's)."""

from hypothesis import given
from hypothesis import strategies as st
from svcc.contracts.diagnostics import Diagnostic
from svcc.contracts.diagnostics.codes import REGISTRY
from svcc.ir.canonical import ENCODER
from svcc.ir.model import Span

_spans = st.none() | st.builds(
    Span,
    line=st.integers(0, 10**6),
    column=st.integers(0, 10**4),
    end_line=st.integers(0, 10**6),
    end_column=st.integers(0, 10**4),
    cell=st.none() | st.integers(0, 500),
)
_texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


@given(
    code=st.sampled_from(sorted(REGISTRY)),
    message=_texts,
    span=_spans,
    hint=st.none() | _texts,
)
def test_the_text_is_the_encoders(
    code: str, message: str, span: Span | None, hint: str | None
) -> None:
    diagnostic = Diagnostic(code=code, message=message, span=span, hint=hint)
    assert diagnostic.json_text() == ENCODER.encode(diagnostic.to_json())


def test_a_lone_surrogate_and_escapes_are_written_as_the_encoder_writes_them() -> None:
    span = Span(line=3, column=4, end_line=5, end_column=1, cell=2)
    for message in ('a "q" \\ \u2026 \ud800 \n\t\x00', ""):
        diagnostic = Diagnostic(code="SVC-R024", message=message, span=span, hint=None)
        assert diagnostic.json_text() == ENCODER.encode(diagnostic.to_json())
