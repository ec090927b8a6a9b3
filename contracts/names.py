"""Names as svcc writes them: whether a name can be written at all, and how it is shown.

A file name, a command-line argument or a string in source is whatever the system or the
author gave: Python holds bytes that are not UTF-8 as lone surrogates, and a name may hold
a newline. One rule here for every layer (the command line refuses an argument, the
repository front end an entry, the Python front end a literal, the text output shows a
path), light enough for the command line's start (``os`` and ``re`` only: ``inspect FILE``
imports neither ``pathlib`` nor the repository front end)."""

import os
import re

# What breaks a line or a terminal: C0 and C1 controls (``\\x85`` is a line break to
# ``str.splitlines``), DEL, and the Unicode line and paragraph separators. Compiled by ``re``
# on first use (its cache), not at import: most names are printable, and compiling the
# class costs about half a millisecond of every start.
_CONTROL = r"[\x00-\x1f\x7f-\x9f\u2028\u2029]"


def is_utf8(text: str) -> bool:
    """False for text holding a lone surrogate (a byte that was not UTF-8 in a file name
    or an argument, or ``"\\ud800"`` in source): it has no UTF-8 form, so it can be written
    neither to JSON, the IR nor a bundle's manifest (``inspect DIR`` of a tree holding
    ``pk\\xff/mod.py`` ended in a ``UnicodeEncodeError``, exit 3)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(name: str) -> str:
    """``name`` printable on one line: each byte that is not UTF-8 as ``\\xNN``, and each
    control character or line separator as its escape (``a\\nb.py``: a file name may hold a
    newline, which broke ``inspect DIR``'s one-line notes and headers)."""
    try:
        text = os.fsencode(name).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file system gave (``"\\ud800"``)
        text = name.encode("utf-8", "backslashreplace").decode("utf-8")
    if text.isprintable():
        return text
    return re.sub(_CONTROL, lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
