"""The two text shapes of a report: ``full`` (the default) and ``concise``.

``concise`` is one line per problem, ``path:line:col: CODE [*] severity: message``. ``full``
starts with the same line but only the message's first clause, then shows the source line with a
caret under the span, and under it the rest of the explanation and the fix hint (``= help:``).
Both end with one summary line (left out with ``quiet``); the advice to run ``--fix`` is left out
where it does not apply (inside a pre-commit hook, which has its own fixing hook).

A message is ``what; why; what to write instead``: its clauses are split at the ``; `` that lie
outside backticks, quotes and brackets. The last clause is the fix hint when it starts with an
imperative verb (``use``, ``pass``, ``call``...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Optional

from shapecheck.engine.diagnostics import ENGINE_CODES
from shapecheck.engine.display import escape, escape_path
from shapecheck.frontends.colour import Palette

#: Verbs that open a fix hint in the messages of the rules.
_HINT_VERBS = frozenset(
    "use pass call write unpack reduce compute create assign index do change move wrap add remove "
    "replace drop cast convert apply keep put return detach set give make declare register clone "
    "initialise initialize zero sum swap check".split()
)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: The note of a finding made with the arguments of the calls of a function (engine/contexts.py).
_CALL_NOTE = re.compile(r" \(with the arguments of the calls? on lines? (\d+(?:, \d+)*)\)$")
#: At most this many related lines are shown under a finding.
_MAX_RELATED = 3
_TAB = "    "


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def split_clauses(message: str) -> list[str]:
    """The clauses of ``message`` separated by ``; `` outside backticks, quotes and brackets."""
    clauses: list[str] = []
    closers: list[str] = []
    quote = ""
    start = 0
    for index, char in enumerate(message):
        if quote:
            if char == quote:
                quote = ""
        elif char in "`\"":
            quote = char
        elif char in _OPEN:
            closers.append(_OPEN[char])
        elif closers and char == closers[-1]:
            closers.pop()
        elif char == ";" and not closers and message[index + 1:index + 2] == " ":
            clauses.append(message[start:index])
            start = index + 2
    clauses.append(message[start:])
    return [clause.strip() for clause in clauses if clause.strip()]


@dataclass(frozen=True)
class MessageParts:
    """A message cut for the ``full`` shape: headline, further explanation, fix hint."""

    headline: str
    details: tuple[str, ...] = ()
    hint: Optional[str] = None
    #: lines of the calls whose arguments the finding was made with
    call_lines: tuple[int, ...] = ()


def message_parts(message: str) -> MessageParts:
    """Cut ``message`` into its first clause, the middle clauses and a trailing fix hint; the
    note naming the calls a finding comes from becomes ``call_lines``."""
    note = _CALL_NOTE.search(message)
    calls: tuple[int, ...] = ()
    if note is not None:
        calls = tuple(int(n) for n in note.group(1).split(", "))
        message = message[:note.start()]
    clauses = split_clauses(message) or [message]
    hint = None
    if len(clauses) > 1:
        first_word = clauses[-1].split(" ", 1)[0].strip("`").lower()
        if first_word in _HINT_VERBS:
            hint = clauses.pop()
    return MessageParts(clauses[0], tuple(clauses[1:]), hint, calls)


@dataclass
class SourceLines:
    """The lines of the files a report shows, read once each; ``given`` holds text already in
    hand (stdin). A file that cannot be read shows no source line."""

    given: Mapping[str, str] = field(default_factory=dict)
    _files: dict = field(default_factory=dict)

    def line(self, path: str, number: int, cell: Optional[int] = None) -> Optional[str]:
        """Line ``number`` (1-based) of ``path`` (of its cell ``cell`` in a notebook) without its
        line break, or ``None``."""
        if path not in self._files:
            self._files[path] = self._read(path)
        lines = self._files[path]
        if cell is not None:
            lines = self._cells(path).get(cell)
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]

    def _cells(self, path: str) -> dict:
        key = (path, "cells")
        if key not in self._files:
            from shapecheck.engine.notebook_core import cell_lines

            lines = self._files[path]
            self._files[key] = cell_lines("\n".join(lines)) if lines is not None else {}
        return self._files[key]

    def _read(self, path: str) -> Optional[list[str]]:
        text = self.given.get(path)
        if text is None:
            try:
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", errors="replace")
            except (OSError, ValueError):
                return None
        return _LINE_BREAK.split(text)


def _fix_mark(diagnostic) -> str:
    return " [*]" if diagnostic.fixable else " [-]" if diagnostic.unsafe_fix else ""


def location_text(diagnostic) -> str:
    """``path:line:column``, or ``path:cell N:line:column`` in a notebook (as ruff writes it)."""
    cell = getattr(diagnostic, "cell", None)
    where = f"cell {cell}:" if cell is not None else ""
    return f"{escape_path(diagnostic.path)}:{where}{diagnostic.line}:{diagnostic.column}"


def _header(diagnostic, message: str, palette: Palette) -> str:
    severity = diagnostic.severity
    location = palette.paint(f"{location_text(diagnostic)}:", "bold")
    code = palette.paint(f"{diagnostic.code}{_fix_mark(diagnostic)}", severity)
    return f"{location} {code} {palette.paint(severity + ':', severity)} {escape(message)}"


def _shown(text: str) -> str:
    return escape(text.replace("\t", _TAB))


def _has_position(diagnostic) -> bool:
    """False for an engine diagnostic at 1:1: a file that could not be read or written, or a rule
    that raised, points at no code."""
    return not (diagnostic.code in ENGINE_CODES and (diagnostic.line, diagnostic.column) == (1, 1))


@dataclass(frozen=True)
class _Place:
    """A related line under a finding: where to underline (0-based columns; ``None``: the whole
    line) and what to say there."""

    line: int
    start: Optional[int]
    end: Optional[int]
    label: str
    #: in a notebook, the cell the line counts in
    cell: Optional[int] = None


def _places(diagnostic, call_lines: tuple[int, ...]) -> list[_Place]:
    """The related places of ``diagnostic`` (at most :data:`_MAX_RELATED`), then the calls whose
    arguments it was made with, in that order."""
    places = []
    for related in diagnostic.related[:_MAX_RELATED]:
        end = related.end_column - 1 if related.end_line == related.line else None
        cell = getattr(related, "cell", None) or diagnostic.cell
        places.append(_Place(related.line, related.column - 1, end, related.label, cell))
    shown = {(p.cell, p.line) for p in places}
    for number in call_lines[:_MAX_RELATED]:  # a report made before the calls were related places
        if (diagnostic.cell, number) not in shown:
            places.append(_Place(number, None, None, "called here: the finding uses these arguments", diagnostic.cell))
    return places


def _place_lines(place: _Place, text: str, width: int, palette: Palette) -> list[str]:
    """The gutter, the source line and its underline with the label, of one related place."""
    shown = _shown(text).rstrip()
    if place.start is None:
        start = len(shown) - len(shown.lstrip())
        length = len(shown) - start
    else:
        begin = min(place.start, len(text))
        stop = len(text.rstrip()) if place.end is None else min(max(place.end, begin + 1), len(text))
        start = len(_shown(text[:begin]))
        length = len(_shown(text[begin:stop]))
    pad = " " * width
    bar = palette.paint("|", "gutter")
    underline = palette.paint("-" * max(length, 1) + " " + escape(place.label), "help")
    return [
        f"{pad} {bar}",
        f"{palette.paint(str(place.line).rjust(width), 'gutter')} {bar} {shown}",
        f"{pad} {bar} {' ' * start}{underline}",
    ]


def _snippet(diagnostic, sources: SourceLines, palette: Palette, places: list[_Place]) -> list[str]:
    source = sources.line(diagnostic.path, diagnostic.line, diagnostic.cell) if _has_position(diagnostic) else None
    if source is None:
        return []
    width = _width(diagnostic, places)
    start = max(diagnostic.column - 1, 0)
    if diagnostic.end_line == diagnostic.line and diagnostic.end_column > diagnostic.column:
        end = diagnostic.end_column - 1
    elif diagnostic.end_line > diagnostic.line:
        end = len(source)
    else:
        end = start + 1
    start = min(start, len(source))
    end = max(min(end, len(source)), start + 1)
    pad = " " * width
    bar = palette.paint("|", "gutter")
    carets = palette.paint("^" * max(len(_shown(source[start:end])), 1), diagnostic.severity)
    lines = [
        f"{pad} {bar}",
        f"{palette.paint(str(diagnostic.line).rjust(width), 'gutter')} {bar} {_shown(source).rstrip()}",
        f"{pad} {bar} {' ' * len(_shown(source[:start]))}{carets}",
    ]
    cell = diagnostic.cell
    for place in places:
        text = sources.line(diagnostic.path, place.line, place.cell)
        if text is None or (place.cell, place.line) == (diagnostic.cell, diagnostic.line):
            continue
        if place.cell != cell:  # a place in another cell of the notebook: name where it lies
            cell = place.cell
            where = f"{escape_path(diagnostic.path)}:cell {cell}:{place.line}:{(place.start or 0) + 1}"
            lines.extend([f"{pad} {bar}", f"{pad}{palette.paint(':::', 'gutter')} {where}"])
            lines.extend(_place_lines(place, text, width, palette)[1:])
            continue
        lines.extend(_place_lines(place, text, width, palette))
    lines.append(f"{pad} {bar}")
    return lines


def _width(diagnostic, places: list[_Place]) -> int:
    """The width of the gutter: the longest line number shown."""
    return len(str(max((diagnostic.line, *(p.line for p in places)))))


def _line_name(diagnostic, place: _Place) -> str:
    """``line L``, or ``cell C line L`` for a place in another cell than the finding's."""
    return f"line {place.line}" if place.cell == diagnostic.cell else f"cell {place.cell} line {place.line}"


def _full_block(diagnostic, sources: SourceLines, palette: Palette) -> list[str]:
    engine = diagnostic.code in ENGINE_CODES  # its own words, kept whole
    parts = MessageParts(diagnostic.message) if engine else message_parts(diagnostic.message)
    lines = [_header(diagnostic, parts.headline, palette)]
    places = _places(diagnostic, parts.call_lines)
    snippet = _snippet(diagnostic, sources, palette, places)
    lines.extend(snippet)
    indent = " " * (_width(diagnostic, places) if snippet else 2)
    equals = palette.paint("=", "gutter")
    if not snippet:
        lines.extend(f"{indent} {equals} {_line_name(diagnostic, p)}: {escape(p.label)}"
                     for p in places if p.start is not None)
    if parts.call_lines and not snippet:
        numbers = ", ".join(str(n) for n in parts.call_lines)
        lines.append(f"{indent} = with the arguments of the call(s) on line(s) {numbers}")
    lines.extend(f"{indent} {equals} {escape(detail)}" for detail in parts.details)
    if diagnostic.condition and diagnostic.condition not in diagnostic.message:
        lines.append(f"{indent} {equals} holds unless {escape(diagnostic.condition)}")
    if parts.hint:
        lines.append(f"{indent} {equals} {palette.paint('help:', 'help')} {escape(parts.hint)}")
    return lines


def summary_lines(diagnostics: list, fixes_applied: int, fix_mode: bool, fix_hints: bool) -> list[str]:
    """The closing lines: counts, and (when ``fix_hints``) how to apply the fixes."""
    count = len(diagnostics)
    fixable = sum(1 for d in diagnostics if d.fixable)
    unsafe = sum(1 for d in diagnostics if d.unsafe_fix)
    if fix_mode:
        return [f"Fixed {_plural(fixes_applied, 'problem')}, {count} remaining."]
    if not count:
        return ["All checks passed."]
    extra = f", {unsafe} with an unsafe fix" if unsafe else ""
    lines = [f"Found {_plural(count, 'problem')} ({fixable} fixable{extra})."]
    if fix_hints and fixable:
        lines.append("Run `shapecheck lint --fix` to apply the fixes marked [*].")
    if fix_hints and unsafe:
        lines.append("Fixes marked [-] may change what the code does: review them, then apply "
                     "them with `shapecheck lint --fix --unsafe-fixes`.")
    return lines


@dataclass(frozen=True)
class TextOptions:
    """How a text report looks: its shape, colour, summary and hints, the text of stdin."""

    full: bool = True
    colour: bool = False
    quiet: bool = False
    fix_hints: bool = True
    given: Mapping[str, str] = field(default_factory=dict)


def format_text_report(diagnostics: list, fixes_applied: int = 0, fix_mode: bool = False,
                       options: Optional[TextOptions] = None) -> str:
    """The whole text report in the ``full`` or ``concise`` shape."""
    options = options or TextOptions()
    palette = Palette(options.colour)
    lines: list[str] = []
    if options.full:
        sources = SourceLines(options.given)
        for diagnostic in diagnostics:
            lines.extend(_full_block(diagnostic, sources, palette))
            lines.append("")
    else:
        lines.extend(_header(d, d.message, palette) for d in diagnostics)
    if not options.quiet:
        lines.extend(summary_lines(diagnostics, fixes_applied, fix_mode, options.fix_hints))
    elif lines and lines[-1] == "":
        lines.pop()
    return "".join(line + "\n" for line in lines)
