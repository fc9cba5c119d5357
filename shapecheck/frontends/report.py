"""Output formats: ``full`` and ``concise`` text (see :mod:`shapecheck.frontends.text_output`),
``json``, ``sarif`` (2.1.0, for GitHub code scanning), ``github``.

Every formatter takes the sorted diagnostics and returns the whole text to print, so the
output of a run is one string, identical whatever the number of worker processes.

A path may hold any character a file name can (newlines, escape sequences, bytes that are not
UTF-8), so each format shows it safely: ``text`` through :func:`shapecheck.engine.display.escape_path`,
``json`` as a JSON string (a byte that is not UTF-8 is the lone surrogate ``\\udcXX``, as
Python's ``os.fsdecode`` gives it), ``sarif`` as a percent-encoded URI of the path's bytes, and
``github`` with the runner's own escaping for ``%``, CR, LF, ``:`` and ``,`` and the visible
escaping for every other control character.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Iterable, Optional

from shapecheck.engine.display import escape
from shapecheck.frontends.text_output import TextOptions, format_text_report

#: The project's page (``[project.urls]`` of pyproject.toml; a test keeps the two equal).
INFO_URI = "https://pypi.org/project/torch-shapecheck/"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def format_text(diagnostics: list, fixes_applied: int = 0, fix_mode: bool = False) -> str:
    """The ``concise`` text report: ``path:line:col: SC101 [*] error: message`` lines, then a
    summary line."""
    return format_text_report(diagnostics, fixes_applied, fix_mode, TextOptions(full=False))


def format_json(diagnostics: list) -> str:
    """One JSON array; each object has path, line, column, end_line, end_column, code, name,
    severity, message, fixable, condition (the exception under which the finding does not
    hold, ``null`` when it holds whatever the sizes), related (the other places the finding
    comes from: line, column, end_line, end_column, label, and cell: the place's own cell in a
    notebook, ``null`` in a Python file) and cell (in a notebook, the 1-based
    number of the cell the lines count in, counting every cell as ruff does; ``null`` in a
    Python file)."""
    rows = [
        {
            "path": d.path,
            "line": d.line,
            "column": d.column,
            "end_line": d.end_line,
            "end_column": d.end_column,
            "code": d.code,
            "name": d.name,
            "severity": d.severity,
            "message": d.message,
            "fixable": d.fixable,
            "condition": d.condition,
            "cell": d.cell,
            "related": [
                {"line": r.line, "column": r.column, "end_line": r.end_line, "end_column": r.end_column,
                 "label": r.label, "cell": r.cell}
                for r in d.related
            ],
        }
        for d in diagnostics
    ]
    return json.dumps(rows, indent=2) + "\n"


def sarif_location(path: str) -> dict:
    """The SARIF ``artifactLocation`` of ``path`` (see :mod:`shapecheck.frontends.sarif`)."""
    from shapecheck.frontends import sarif

    return sarif.sarif_location(path)


def format_sarif(diagnostics: list) -> str:
    """A SARIF 2.1.0 log (see :mod:`shapecheck.frontends.sarif`)."""
    from shapecheck.frontends import sarif

    return sarif.format_sarif(diagnostics, INFO_URI)


#: Characters the runner's own escaping carries (``%0D``, ``%0A``); the rest are made visible.
_GITHUB_CARRIES = "\r\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(diagnostics: list) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=...::message``.

    In a notebook the lines count in the code cells joined, as ruff gives them (GitHub shows a
    notebook as its JSON, where no cell line can be pointed at), and the message starts with
    ``cell N:line:column:``."""
    from shapecheck.engine.notebook_core import concatenated

    lines = []
    for d, where in zip(concatenated(diagnostics), diagnostics):
        kind = "error" if d.severity == "error" else "warning"
        props = ",".join(
            [
                f"file={_escape_property(escape(d.path, keep=_GITHUB_CARRIES))}",
                f"line={d.line}",
                f"col={d.column}",
                f"endLine={d.end_line}",
                f"endColumn={d.end_column}",
                f"title={_escape_property(f'{d.code} ({d.name})')}",
            ]
        )
        cell = f"cell {d.cell}:{where.line}:{where.column}: " if d.cell is not None else ""
        message = escape(f"{cell}{d.code} {d.message}", keep=_GITHUB_CARRIES)
        lines.append(f"::{kind} {props}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def code_counts(diagnostics: Iterable) -> list[tuple[str, str, int, str]]:
    """(code, name, count, mark) per code, most frequent first; mark is ``[*]`` when a problem of
    the code has a safe fix, ``[-]`` an unsafe one only, else blank."""
    items = list(diagnostics)
    counts = Counter(d.code for d in items)
    names = {d.code: d.name for d in items}
    fixable = {d.code for d in items if d.fixable}
    unsafe = {d.code for d in items if d.unsafe_fix}
    return [
        (code, names[code], count, "[*]" if code in fixable else "[-]" if code in unsafe else "   ")
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def format_statistics(diagnostics: Iterable) -> str:
    """One line per code: count, code, ``[*]`` when fixable, name; most frequent first."""
    rows = code_counts(diagnostics)
    lines = [f"{count:>5}\t{code}\t{mark} {name}" for code, name, count, mark in rows]
    lines.append(f"Found {_plural(sum(row[2] for row in rows), 'problem')}.")
    return "\n".join(lines) + "\n"


def format_statistics_json(diagnostics: Iterable) -> str:
    """``--statistics --output-format json``: one object per code (code, name, count, fixable),
    most frequent first."""
    rows = [
        {"code": code, "name": name, "count": count, "fixable": mark == "[*]"}
        for code, name, count, mark in code_counts(diagnostics)
    ]
    return json.dumps(rows, indent=2) + "\n"


#: The text formats; ``text`` is the old name of ``full``.
TEXT_FORMATS = {"full": True, "text": True, "concise": False}


def render(fmt: str, diagnostics: list, fixes_applied: int = 0, fix_mode: bool = False,
           text: Optional[TextOptions] = None) -> str:
    """The output of a run in format ``fmt``; ``text`` says how a text format looks."""
    if fmt == "json":
        return format_json(diagnostics)
    if fmt == "sarif":
        return format_sarif(diagnostics)
    if fmt == "github":
        return format_github(diagnostics)
    options = replace(text or TextOptions(), full=TEXT_FORMATS.get(fmt, True))
    return format_text_report(diagnostics, fixes_applied, fix_mode, options)
