"""Whether the text report is coloured, and the ANSI styles it uses.

Colour is on when the report goes to a terminal, and the environment decides first, in the order
Python's own tools follow: ``NO_COLOR`` (any non-empty value) turns it off, ``FORCE_COLOR`` (any
non-empty value) turns it on, ``TERM=dumb`` turns it off.
"""

from __future__ import annotations

from typing import Mapping, Optional, TextIO

_RESET = "\x1b[0m"
_STYLES = {
    "bold": "1",
    "error": "1;31",
    "warning": "1;33",
    "gutter": "1;34",
    "help": "1;36",
    "dim": "2",
}


def wants_colour(stream: Optional[TextIO], env: Mapping[str, str]) -> bool:
    """Colour for a report written to ``stream`` under the environment ``env``."""
    if env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", ""):
        return True
    if env.get("TERM", "") == "dumb" or stream is None:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):
        return False


class Palette:
    """Wraps text in ANSI styles, or leaves it alone when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def paint(self, text: str, style: str) -> str:
        """``text`` in ``style`` (a key of the style table; an unknown severity reads as error)."""
        if not self.enabled or not text:
            return text
        code = _STYLES.get(style, _STYLES["error"])
        return f"\x1b[{code}m{text}{_RESET}"
