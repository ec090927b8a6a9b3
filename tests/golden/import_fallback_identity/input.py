"""An agent tool decorated with a framework's decorator that has an identity fallback: the
framework is not declared, so the fallback runs and the function keeps its signature."""

try:
    from strands import tool  # expect: SVC-R002
except ImportError:

    def tool(f):  # expect: SVC-R006 SVC-R004
        return f


@tool
def word_count(text: str) -> int:
    """How many words the text holds."""
    return len(text.split())
