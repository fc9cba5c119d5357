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

    def line(self, path: str, number: int) -> Optional[str]:
        """Line ``number`` (1-based) of ``path`` without its line break, or ``None``."""
        if path not in self._files:
            self._files[path] = self._read(path)
        lines = self._files[path]
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]

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


def _header(diagnostic, message: str, palette: Palette) -> str:
    severity = diagnostic.severity
    location = palette.paint(f"{escape_path(diagnostic.path)}:{diagnostic.line}:{diagnostic.column}:", "bold")
    code = palette.paint(f"{diagnostic.code}{_fix_mark(diagnostic)}", severity)
    return f"{location} {code} {palette.paint(severity + ':', severity)} {escape(message)}"


def _shown(text: str) -> str:
    return escape(text.replace("\t", _TAB))


def _has_position(diagnostic) -> bool:
    """False for an engine diagnostic at 1:1: a file that could not be read or written, or a rule
    that raised, points at no code."""
    return not (diagnostic.code in ENGINE_CODES and (diagnostic.line, diagnostic.column) == (1, 1))


def _snippet(diagnostic, sources: SourceLines, palette: Palette, related: tuple[int, ...] = ()) -> list[str]:
    source = sources.line(diagnostic.path, diagnostic.line) if _has_position(diagnostic) else None
    if source is None:
        return []
    width = len(str(max((diagnostic.line, *related))))
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
    for number in related:
        text = sources.line(diagnostic.path, number)
        if text is None or number == diagnostic.line:
            continue
        shown = _shown(text).rstrip()
        body = shown.lstrip()
        underline = palette.paint("-" * max(len(body), 1) + " called here: the finding uses these arguments", "help")
        lines.extend([
            f"{pad} {bar}",
            f"{palette.paint(str(number).rjust(width), 'gutter')} {bar} {shown}",
            f"{pad} {bar} {' ' * (len(shown) - len(body))}{underline}",
        ])
    lines.append(f"{pad} {bar}")
    return lines


def _full_block(diagnostic, sources: SourceLines, palette: Palette) -> list[str]:
    engine = diagnostic.code in ENGINE_CODES  # its own words, kept whole
    parts = MessageParts(diagnostic.message) if engine else message_parts(diagnostic.message)
    lines = [_header(diagnostic, parts.headline, palette)]
    related = parts.call_lines[:_MAX_RELATED]
    snippet = _snippet(diagnostic, sources, palette, related)
    lines.extend(snippet)
    indent = " " * (len(str(max((diagnostic.line, *related)))) if snippet else 2)
    if parts.call_lines and not snippet:
        numbers = ", ".join(str(n) for n in parts.call_lines)
        lines.append(f"{indent} = with the arguments of the call(s) on line(s) {numbers}")
    equals = palette.paint("=", "gutter")
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
