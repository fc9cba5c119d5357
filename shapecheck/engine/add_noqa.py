"""``--add-noqa``: append ``# noqa: CODES`` to every line with findings, to adopt shapecheck on
a large code base and fix the findings over time.

A line that already has a ``# noqa: ...`` list gets the new codes merged into it; any other
line gets ``  # noqa: CODES`` at its end. A line that ends inside a string spanning several lines
or continues with a backslash cannot carry a comment and is left alone (and counted).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from shapecheck.engine import noqa
from shapecheck.engine.diagnostics import ENGINE_CODES, Diagnostic
from shapecheck.engine.sources import SourceError, decode_source, encode_source

_NOQA_HEAD = re.compile(r"#\s*noqa\s*:?", re.I)
_LISTED = re.compile(r"[A-Za-z0-9_]+")


@dataclass
class Added:
    """What ``--add-noqa`` did: comments added or extended, lines it could not annotate, and the
    files it could not write (each with why)."""

    directives: int = 0
    unreachable: list[tuple[str, int]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def _blocked_lines(text: str) -> set[int]:
    """Lines whose end is inside a token (a string over several lines) or continues with ``\\``."""
    blocked: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.end[0] > tok.start[0] and tok.type not in (tokenize.NEWLINE, tokenize.NL):
                blocked.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, text.count("\n") + 2))
    for number, line in enumerate(text.splitlines(), start=1):
        if line.rstrip().endswith("\\") and "#" not in line:
            blocked.add(number)
    return blocked


def annotate(text: str, codes_by_line: dict[int, set[str]]) -> tuple[str, int, list[int]]:
    """``text`` with the codes added to each line's ``# noqa``: (new text, directives added or
    extended, lines left alone)."""
    lines = text.splitlines(keepends=True)
    blocked = _blocked_lines(text)
    existing: dict[int, noqa.Directive] = {}
    for directive in noqa.directives(text):
        if directive.codes is not None and not directive.own and not directive.problems:
            existing.setdefault(directive.line, directive)
    added, left = 0, []
    for number in sorted(codes_by_line):
        if number > len(lines) or number in blocked:
            left.append(number)
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        found = existing.get(number)
        if found is not None:
            written = _LISTED.findall(_NOQA_HEAD.sub("", body[found.column:found.end], count=1))
            merged = written + sorted(codes_by_line[number] - set(written))
            body = body[:found.column] + "# noqa: " + ", ".join(merged) + body[found.end:]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes_by_line[number]))
        lines[number - 1] = body + ending
        added += 1
    return "".join(lines), added, left


def add_noqa(diagnostics: Iterable[Diagnostic]) -> Added:
    """Add ``# noqa`` comments for ``diagnostics`` (rule findings; engine codes are skipped) to
    their files, each written atomically and only while it still holds what was linted."""
    by_path: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    in_cells: dict[str, dict[tuple[int, int], set[str]]] = defaultdict(lambda: defaultdict(set))
    for d in diagnostics:
        if d.code not in ENGINE_CODES and d.code != noqa.UNUSED_NOQA:
            if d.cell is not None:
                in_cells[d.path][(d.cell, d.line)].add(d.code)
            else:
                by_path[d.path][d.line].add(d.code)
    outcome = Added()
    for path in sorted(by_path):
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            decoded = decode_source(data)
        except (OSError, SourceError) as exc:
            outcome.failed.append((path, getattr(exc, "strerror", None) or str(exc)))
            continue
        text, added, left = annotate(decoded.text, by_path[path])
        outcome.unreachable.extend((path, line) for line in left)
        _write(outcome, path, encode_source(text, decoded), data, added)
    for path in sorted(in_cells):
        _annotate_notebook(outcome, path, in_cells[path])
    return outcome


def _annotate_notebook(outcome: Added, path: str, codes: dict[tuple[int, int], set[str]]) -> None:
    """``--add-noqa`` in the code cells of the notebook ``path``: each comment on its cell line."""
    from shapecheck.engine import notebook_core as notebooks

    try:
        with open(path, "rb") as handle:
            data = handle.read()
        text, bom = notebooks.decode(data)
        notebook = notebooks.load(text)
    except (OSError, notebooks.NotebookError) as exc:
        outcome.failed.append((path, str(getattr(exc, "strerror", None) or getattr(exc, "message", exc))))
        return
    program = notebook.program
    by_line: dict[int, set[str]] = defaultdict(set)
    for (cell, line), found in codes.items():
        number = program.program_line(cell, line)
        if number is not None:
            by_line[number] |= found
    new_program, added, left = annotate(program.text, by_line)
    outcome.unreachable.extend((f"{path}:cell {program.position(n)[0]}", program.position(n)[1]) for n in left)
    sources = program.cell_sources(new_program)
    if sources is None:
        outcome.failed.append((path, "the cells could not be mapped back to the notebook"))
        return
    new_text = notebooks.write_cells(notebook, sources)
    _write(outcome, path, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"), data, added)


def _write(outcome: Added, path: str, new: bytes, data: bytes, added: int) -> None:
    """Write ``new`` over ``path`` (read as ``data``) when ``added`` comments were added."""
    from shapecheck.engine import writeback

    if added:
        try:
            writeback.write_fixed(path, new, data)
        except writeback.NotWritten as exc:
            outcome.failed.append((path, exc.message))
            return
        except (OSError, UnicodeEncodeError) as exc:
            outcome.failed.append((path, str(getattr(exc, "strerror", None) or exc)))
            return
        outcome.directives += added
