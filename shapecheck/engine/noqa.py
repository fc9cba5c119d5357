"""Suppression comments: ``# noqa``, ``# noqa: SC101,SC2`` and ``# shapecheck: ignore[SC101]``.

A suppression applies to diagnostics that start on its line. Codes are matched by prefix, so
``SC2`` silences every shape rule; a bare ``# noqa`` or ``# shapecheck: ignore`` silences all.
Comments are found with :mod:`tokenize`, so ``"# noqa"`` inside a string does not count.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Optional, Union

#: The marker for "every code" in a line's suppression set.
ALL = "*"

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*shapecheck:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")

Suppressions = dict[int, Union[str, frozenset]]


def parse_comment(comment: str) -> Optional[Union[str, frozenset]]:
    """The codes one comment suppresses: :data:`ALL`, a frozenset of code prefixes, or ``None``."""
    codes: set[str] = set()
    everything = False
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(comment):
            listed = match.group("codes")
            if listed is None or not listed.strip():
                everything = True
            else:
                codes.update(c.upper() for c in _CODE.findall(listed))
    if everything:
        return ALL
    return frozenset(codes) if codes else None


def _comments(text: str) -> list[tuple[int, str]]:
    """``(line, comment text)`` for every comment, by tokenizing; falls back to a line scan."""
    try:
        return [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        found = []
        for number, line in enumerate(text.splitlines(), start=1):
            index = line.find("#")
            if index != -1:
                found.append((number, line[index:]))
        return found


def suppressions(text: str) -> Suppressions:
    """Map each line that carries a suppression to what it suppresses."""
    result: Suppressions = {}
    if "noqa" not in text.lower() and "shapecheck:" not in text.lower():
        return result
    for line, comment in _comments(text):
        parsed = parse_comment(comment)
        if parsed is None:
            continue
        previous = result.get(line)
        if isinstance(parsed, str) or isinstance(previous, str):  # either is ALL
            result[line] = ALL
        else:
            result[line] = parsed | (previous or frozenset())
    return result


def is_suppressed(table: Suppressions, line: int, code: str) -> bool:
    """True when a comment on ``line`` suppresses ``code``."""
    entry = table.get(line)
    if entry is None:
        return False
    if entry == ALL:
        return True
    return any(code.startswith(prefix) for prefix in entry)
