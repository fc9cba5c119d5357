"""Output formats: ``text``, ``json``, ``sarif`` (2.1.0, for GitHub code scanning), ``github``.

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
import re
import urllib.parse
from collections import Counter
from typing import Iterable

from shapecheck.engine.display import escape, escape_path
from shapecheck.version import __version__

_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_INFO_URI = "https://pypi.org/project/shapecheck/"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def format_text(diagnostics: list, fixes_applied: int = 0, fix_mode: bool = False) -> str:
    """``path:line:col: SC101 [*] message`` lines, then a summary line."""
    lines = [
        f"{escape_path(d.path)}:{d.line}:{d.column}: {d.code}{_fix_mark(d)} {escape(d.message)}"
        for d in diagnostics
    ]
    count = len(diagnostics)
    fixable = sum(1 for d in diagnostics if d.fixable)
    unsafe = sum(1 for d in diagnostics if d.unsafe_fix)
    if fix_mode:
        lines.append(f"Fixed {_plural(fixes_applied, 'problem')}, {count} remaining.")
    elif count:
        extra = f", {unsafe} with an unsafe fix" if unsafe else ""
        lines.append(f"Found {_plural(count, 'problem')} ({fixable} fixable{extra}).")
        if fixable:
            lines.append("Run `shapecheck lint --fix` to apply the fixes marked [*].")
        if unsafe:
            lines.append("Fixes marked [-] may change what the code does: review them, then apply "
                         "them with `shapecheck lint --fix --unsafe-fixes`.")
    else:
        lines.append("All checks passed.")
    return "\n".join(lines) + "\n"


def format_json(diagnostics: list) -> str:
    """One JSON array; each object has path, line, column, end_line, end_column, code, name,
    severity, message, fixable, condition (the exception under which the finding does not
    hold, ``null`` when it holds whatever the sizes)."""
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
        }
        for d in diagnostics
    ]
    return json.dumps(rows, indent=2) + "\n"


def _level(severity: str) -> str:
    return "error" if severity == "error" else "warning"


def _sarif_rules() -> list[dict]:
    from shapecheck.engine.diagnostics import ENGINE_CODES
    from shapecheck.rules.catalog import all_rules

    rules = []
    for code, name in sorted(ENGINE_CODES.items()):
        text = (
            "The file could not be read, decoded or parsed."
            if code == "SC000"
            else "A rule raised an exception on this file; its other findings may be missing."
        )
        rules.append(
            {
                "id": code,
                "name": name,
                "shortDescription": {"text": text},
                "help": {"text": text, "markdown": text},
                "defaultConfiguration": {"level": "error"},
            }
        )
    for rule in all_rules():
        rules.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": _strip_ticks(rule.summary)},
                "fullDescription": {"text": _strip_ticks(rule.summary)},
                "help": {"text": rule.doc, "markdown": rule.doc},
                "defaultConfiguration": {"level": _level(rule.severity)},
                "properties": {"fixable": bool(rule.fixable), "default_enabled": bool(rule.default_enabled)},
            }
        )
    return sorted(rules, key=lambda r: r["id"])


def _strip_ticks(text: str) -> str:
    return text.replace("`", "")


_DRIVE = re.compile(r"^[A-Za-z]:/")


def _path_bytes(path: str) -> bytes:
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is not an undecodable byte
        return path.encode("utf-8", "surrogatepass")


def sarif_location(path: str) -> dict:
    """The SARIF ``artifactLocation`` of ``path``: a relative URI reference against
    ``%SRCROOT%``, or a ``file:`` URI for an absolute path; every byte outside the unreserved
    set of RFC 3986 (and ``/``) is percent-encoded."""
    raw = _path_bytes(path)
    if raw.startswith(b"/"):
        return {"uri": "file://" + urllib.parse.quote(raw, safe="/")}
    if _DRIVE.match(path):
        return {"uri": "file:///" + raw[:2].decode("ascii") + urllib.parse.quote(raw[2:], safe="/")}
    return {"uri": urllib.parse.quote(raw, safe="/"), "uriBaseId": "%SRCROOT%"}


def format_sarif(diagnostics: list) -> str:
    """A SARIF 2.1.0 log with one run: every rule with its help text, and the results."""
    rules = _sarif_rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for d in diagnostics:
        result = {
            "ruleId": d.code,
            "level": _level(d.severity),
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": sarif_location(d.path),
                        "region": {
                            "startLine": d.line,
                            "startColumn": d.column,
                            "endLine": max(d.end_line, d.line),
                            "endColumn": d.end_column if d.end_line > d.line else max(d.end_column, d.column),
                        },
                    }
                }
            ],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        results.append(result)
    log = {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "shapecheck",
                        "version": __version__,
                        "informationUri": _INFO_URI,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


#: Characters the runner's own escaping carries (``%0D``, ``%0A``); the rest are made visible.
_GITHUB_CARRIES = "\r\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(diagnostics: list) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=...::message``."""
    lines = []
    for d in diagnostics:
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
        message = escape(f"{d.code} {d.message}", keep=_GITHUB_CARRIES)
        lines.append(f"::{kind} {props}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def _fix_mark(diagnostic) -> str:
    """`` [*]`` for a safe fix, `` [-]`` for an unsafe one (``--unsafe-fixes``), else nothing."""
    return " [*]" if diagnostic.fixable else " [-]" if diagnostic.unsafe_fix else ""


def format_statistics(diagnostics: Iterable) -> str:
    """One line per code: count, code, ``[*]`` when fixable, name; most frequent first."""
    items = list(diagnostics)
    counts = Counter(d.code for d in items)
    names = {d.code: d.name for d in items}
    fixable = {d.code for d in items if d.fixable}
    unsafe = {d.code for d in items if d.unsafe_fix}
    lines = []
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "[*]" if code in fixable else "[-]" if code in unsafe else "   "
        lines.append(f"{count:>5}\t{code}\t{mark} {names[code]}")
    total = sum(counts.values())
    lines.append(f"Found {_plural(total, 'problem')}.")
    return "\n".join(lines) + "\n"


def render(fmt: str, diagnostics: list, fixes_applied: int = 0, fix_mode: bool = False) -> str:
    """The output of a run in format ``fmt``."""
    if fmt == "json":
        return format_json(diagnostics)
    if fmt == "sarif":
        return format_sarif(diagnostics)
    if fmt == "github":
        return format_github(diagnostics)
    return format_text(diagnostics, fixes_applied, fix_mode)
