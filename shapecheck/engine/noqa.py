"""Suppression comments: ``# noqa``, ``# noqa: SC101,SC2`` and ``# shapecheck: ignore[SC101]``.

A suppression applies to diagnostics that start on its line. Codes are matched by prefix, so
``SC2`` silences every shape rule; a bare ``# noqa`` or ``# shapecheck: ignore`` silences all.
Comments are found with :mod:`tokenize`, so ``"# noqa"`` inside a string does not count.

A list that is not a list of codes never widens into a blanket: ``# noqa: foo`` and
``# noqa: SC1O1`` (a letter O) silence nothing, ``# noqa SC101`` (no colon) silences SC101 only,
and each is a *problem* (:func:`problems`) the command line prints as a warning naming the
comment. Codes of other tools (``E501``) are left to those tools: they silence nothing here and
are not problems. Words after the codes (``# noqa: SC101 the view is contiguous``) are an
explanation.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Optional, Union

#: The marker for "every code" in a line's suppression set.
ALL = "*"
#: The opt-in rule that reports suppressions that silence nothing (see :func:`unused`).
UNUSED_NOQA = "SC998"
#: Our codes: ``SC`` then digits (a prefix such as ``SC2`` selects a family).
OWN_PREFIX = "SC"

_NOQA = re.compile(r"#\s*noqa(?![\w-])", re.I)
_IGNORE = re.compile(r"#\s*shapecheck:\s*ignore(?![\w-])", re.I)
_ANY_DIRECTIVE = re.compile(r"#\s*(?:noqa|shapecheck:)", re.I)
_SEPARATORS = re.compile(r"[\s,]*")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_CODE_LIKE = re.compile(r"[A-Za-z]+[0-9][A-Za-z0-9_]*")
_CODE = re.compile(r"[A-Za-z]+[0-9]+")

Suppressions = dict[int, Union[str, frozenset]]


@dataclass(frozen=True)
class Directive:
    """One suppression comment: where it starts, what it says, what it silences, and what is
    wrong with it (each problem a phrase such as ``"`SC1O1` is not a rule code"``)."""

    line: int
    #: 0-based column of its ``#``
    column: int
    text: str
    #: the code prefixes it silences, or ``None`` for every code (a blanket)
    codes: Optional[frozenset[str]]
    #: ``True`` for ``# shapecheck: ignore``, which names our codes only
    own: bool
    problems: tuple[str, ...] = ()
    #: 0-based column just after its code list (just after the word for a bare directive)
    end: int = 0

    @property
    def names_own_codes(self) -> bool:
        """True when the directive is ours to judge: ``# shapecheck: ignore`` or a ``# noqa``
        that lists at least one ``SC`` code (a bare ``# noqa`` may be for another tool)."""
        return self.own or bool(self.codes)


def _code_list(comment: str, start: int, own: bool) -> tuple[set[str], list[str], int]:
    """The codes listed from ``start``: (our codes, problems, end of the list)."""
    codes: set[str] = set()
    problems: list[str] = []
    listed = 0
    position = end = start
    while True:
        position = _SEPARATORS.match(comment, position).end()  # type: ignore[union-attr]  # always matches
        word = _WORD.match(comment, position)
        if word is None:
            break
        text = word.group()
        if not _CODE_LIKE.fullmatch(text):
            break  # an explanation after the codes, or no code at all
        listed += 1
        position = end = word.end()
        if not _CODE.fullmatch(text):
            if own or text.upper().startswith(OWN_PREFIX):  # another tool's typo is its business
                problems.append(f"`{text}` is not a rule code")
        elif text.upper().startswith(OWN_PREFIX):
            codes.add(text.upper())
        elif own:
            problems.append(f"`{text}` is not a shapecheck code")
    if listed == 0:
        problems.append("expected rule codes such as `SC101`")
    return codes, problems, end


def _noqa(comment: str, match: re.Match, line: int, column: int) -> Directive:
    tail = match.end()
    rest = comment[tail:]
    colon = re.match(r"\s*:", rest)
    problems: list[str] = []
    if colon is not None:
        codes, problems, end = _code_list(comment, tail + colon.end(), False)
    elif re.match(r"\s+[A-Za-z]+[0-9]", rest):
        codes, problems, end = _code_list(comment, tail, False)
        if codes or problems:  # only when it names our codes: `# noqa F401` is flake8's business
            problems.insert(0, "a colon is missing after `noqa`")
    else:
        return Directive(line, column + match.start(), match.group(), None, False, (), column + tail)
    return Directive(line, column + match.start(), _as_written(comment, match.start(), end), frozenset(codes),
                     False, tuple(problems), column + end)


def _as_written(comment: str, start: int, end: int) -> str:
    """The directive as written: from its ``#`` to the end of its code list, or, when that
    list is malformed, to the next ``#`` (so that the warning shows what the user typed)."""
    following = comment.find("#", start + 1)
    stop = len(comment) if following == -1 else following
    return comment[start:max(end, stop)].rstrip()


def _ignore(comment: str, match: re.Match, line: int, column: int) -> Directive:
    tail = match.end()
    if not comment.startswith("[", tail):
        return Directive(line, column + match.start(), match.group(), None, True, (), column + tail)
    close = comment.find("]", tail)
    inside_end = close if close != -1 else len(comment)
    codes, problems, end = _code_list(comment[:inside_end], tail + 1, True)
    if end < inside_end and comment[end:inside_end].strip():
        problems.append(f"`{comment[end:inside_end].strip()}` is not a rule code")
    if close == -1:
        problems.append("the `]` is missing")
    text = comment[match.start():close + 1 if close != -1 else len(comment)]
    return Directive(line, column + match.start(), text, frozenset(codes), True, tuple(problems),
                     column + match.start() + len(text))


def parse_directives(comment: str, line: int = 1, column: int = 0) -> list[Directive]:
    """The suppression directives in one comment (a comment may hold several)."""
    found = [_noqa(comment, m, line, column) for m in _NOQA.finditer(comment)]
    found += [_ignore(comment, m, line, column) for m in _IGNORE.finditer(comment)]
    return sorted(found, key=lambda d: d.column)


def parse_comment(comment: str) -> Optional[Union[str, frozenset]]:
    """The codes one comment suppresses: :data:`ALL`, a frozenset of code prefixes, or ``None``."""
    return _merge(None, parse_directives(comment))


def _merge(previous: Optional[Union[str, frozenset]], found: Iterable[Directive]):
    result = previous
    for directive in found:
        if directive.codes is None or result == ALL:
            result = ALL
        elif directive.codes:
            result = directive.codes | (result or frozenset())  # type: ignore[operator]  # not ALL here
    return result


def _comments(text: str) -> list[tuple[int, int, str]]:
    """``(line, column, comment text)`` for every comment, by tokenizing; falls back to a line
    scan."""
    try:
        return [
            (tok.start[0], tok.start[1], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        found = []
        for number, line in enumerate(text.splitlines(), start=1):
            index = line.find("#")
            if index != -1:
                found.append((number, index, line[index:]))
        return found


def _may_hold_directives(text: str) -> bool:
    lowered = text.lower()
    return "noqa" in lowered or "shapecheck:" in lowered


def directives(text: str) -> list[Directive]:
    """Every suppression directive of a source text, in order."""
    if not _may_hold_directives(text):
        return []
    found: list[Directive] = []
    for line, column, comment in _comments(text):
        found.extend(parse_directives(comment, line, column))
    return found


def table_of(found: Iterable[Directive]) -> Suppressions:
    """Map each line that carries a directive to what it suppresses."""
    result: Suppressions = {}
    for directive in found:
        merged = _merge(result.get(directive.line), [directive])
        if merged is not None:
            result[directive.line] = merged
    return result


def suppressions(text: str) -> Suppressions:
    """Map each line that carries a suppression to what it suppresses."""
    return table_of(directives(text))


def matching_entries(table: Suppressions, line: int, code: str) -> set[str]:
    """Every entry on ``line`` that suppresses ``code``: :data:`ALL` or the code prefixes."""
    entry = table.get(line)
    if entry is None:
        return set()
    if entry == ALL:
        return {ALL}
    return {prefix for prefix in entry if code.startswith(prefix)}


def is_suppressed(table: Suppressions, line: int, code: str) -> bool:
    """True when a comment on ``line`` suppresses ``code``."""
    return bool(matching_entries(table, line, code))


def problems(text: str, known_codes: Iterable[str]) -> list[tuple[int, str, str]]:
    """``(line, directive, what is wrong)`` for each directive that is malformed or names a
    code that no rule has (``known_codes``: every rule's code)."""
    known = list(known_codes)
    if not _may_hold_directives(text):
        return []
    # a cheap scan of the directives' lines first: most files have only well-formed ones, and
    # then there is no need to tokenize them (which finds the real comments, not text in strings)
    if not any(_faults(d, known) for match in _ANY_DIRECTIVE.finditer(text)
               for d in parse_directives(_rest_of_line(text, match.start()))):
        return []
    out = []
    for directive in directives(text):
        why = _faults(directive, known)
        if why:
            out.append((directive.line, directive.text, "; ".join(why)))
    return out


def _rest_of_line(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end == -1 else text[start:end]


def _faults(directive: Directive, known: list[str]) -> list[str]:
    why = list(directive.problems)
    for code in sorted(directive.codes or ()):
        if not any(k.startswith(code) for k in known):
            why.append(f"no rule has the code `{code}`")
    return why


def unused(
    found: list[Directive], used: dict[int, set[str]], enabled: Iterable[str], known: Iterable[str] = (),
) -> list[tuple[Directive, str]]:
    """``(directive, message)`` for each of our directives that silenced nothing in this run
    (``used``: line -> the entries of :func:`matching_entries` that silenced a finding there;
    ``enabled``: the codes of the rules that ran). A bare ``# noqa`` is left alone: it may be
    there for another tool. A directive naming :data:`UNUSED_NOQA` (or a line's bare
    ``# noqa``) keeps it from being reported. A code that no rule of ``known`` has is left to
    the warning of :func:`problems`."""
    enabled = list(enabled)
    known = list(known)
    out = []
    for directive in found:
        if not directive.names_own_codes:
            continue
        neighbours = [d for d in found if d.line == directive.line]
        if any(d.codes and any(UNUSED_NOQA.startswith(c) for c in d.codes) for d in neighbours):
            continue
        if any(not d.names_own_codes for d in neighbours):  # a bare noqa directive on the line
            continue
        silenced = used.get(directive.line, set())
        if directive.codes is None:
            if not silenced:
                out.append((directive, f"`{directive.text}` silences nothing on this line"))
            continue
        idle = [
            c for c in sorted(directive.codes)
            if c not in silenced and c != UNUSED_NOQA and ALL not in silenced
            and (not known or any(k.startswith(c) for k in known))
        ]
        if not idle:
            continue
        off = [c for c in idle if not any(e.startswith(c) for e in enabled)]
        words = ", ".join(f"`{c}`" for c in idle)
        note = f" ({', '.join(off)} did not run)" if off else ""
        out.append((directive, f"unused suppression {words} in `{directive.text}`{note}"))
    return out
