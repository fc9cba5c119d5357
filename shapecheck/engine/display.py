"""One visible escaping for text a repository controls (file names, config values) before it is
shown to a person.

A file name may hold any byte but ``/`` and NUL: a newline in it would forge report lines, an
escape sequence would drive the terminal, a bidi override would reorder what the reader sees.
Every character :meth:`str.isprintable` rejects is written the way Python writes it in a string
literal, so an escaped line is one line of plain, printable text:

- ``\\n``, ``\\r``, ``\\t``;
- ``\\xNN`` for a byte: the other C0 controls and DEL, and a byte of a file name that is not
  UTF-8 (Python reads it as a lone surrogate, U+DC80 to U+DCFF);
- ``\\uNNNN`` (or ``\\UNNNNNNNN``) for every other character: C1 controls, U+2028 and U+2029,
  bidi and zero-width controls, spaces other than U+0020, unassigned code points.

:func:`escape_path` also doubles a backslash, so that an escaped path reads back unambiguously.
"""

from __future__ import annotations

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    point = ord(char)
    if point < 0x80:
        return f"\\x{point:02x}"
    if 0xDC80 <= point <= 0xDCFF:  # an undecodable byte kept by the surrogateescape handler
        return f"\\x{point - 0xDC00:02x}"
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


def escape(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character escaped (see the module docstring), except
    those in ``keep``; text that is already printable comes back unchanged."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape_char(c) for c in text)


def escape_path(path: str) -> str:
    """A path as reports and messages show it: :func:`escape`, and each backslash doubled."""
    return escape(path.replace("\\", "\\\\"))
