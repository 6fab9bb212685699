"""Showing untrusted text (names and paths from a model) safely: in generated
code, and in messages to a terminal. Imports nothing of x2."""
from __future__ import annotations


def escape_text(text) -> str:
    """`text` as printable ASCII that is the same text inside a string literal
    or docstring: backslashes, quotes, line breaks, NUL and every non-ASCII
    character become escapes. The result cannot end a comment line, a
    literal or a docstring, and Unicode normalisation cannot change it."""
    out = []
    for ch in str(text):
        if ch == "\\" or ch in "\"'":
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(ascii(ch)[1:-1])  # \n, \x00, \u2028, \U0001f600
    return "".join(out)


def quoted(name) -> str:
    """A model's name inside a message: one line, quoted, control characters
    escaped (so a name cannot fake lines of x2's output)."""
    return "'" + printable(str(name)).replace("\n", "\\n").replace("'", "\\'") + "'"


def printable(message: str) -> str:
    """A message for a terminal: line breaks kept, every other control or
    invisible formatting character (CR, NUL, ESC, U+2028, bidi overrides)
    escaped."""
    import unicodedata
    return "".join(ch if ch == "\n" or unicodedata.category(ch)[0] not in "CZ" or ch == " "
                   else ascii(ch)[1:-1] for ch in message)
