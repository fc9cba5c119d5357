"""Output formats: ``text``, ``json``, ``sarif`` (2.1.0, for GitHub code scanning), ``github``.

Every formatter takes the sorted diagnostics and returns the whole text to print, so the
output of a run is one string, identical whatever the number of worker processes.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Iterable

FORMATS = ("text", "json", "sarif", "github")

_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_INFO_URI = "https://pypi.org/project/shapecheck/"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def format_text(diagnostics: list, fixes_applied: int = 0, fix_mode: bool = False) -> str:
    """``path:line:col: SC101 [*] message`` lines, then a summary line."""
    lines = [
        f"{d.path}:{d.line}:{d.column}: {d.code}{' [*]' if d.fixable else ''} {d.message}"
        for d in diagnostics
    ]
    count = len(diagnostics)
    fixable = sum(1 for d in diagnostics if d.fixable)
    if fix_mode:
        lines.append(f"Fixed {_plural(fixes_applied, 'problem')}, {count} remaining.")
    elif count:
        lines.append(f"Found {_plural(count, 'problem')} ({fixable} fixable).")
        if fixable:
            lines.append("Run `shapecheck lint --fix` to apply the fixes marked [*].")
    else:
        lines.append("All checks passed.")
    return "\n".join(lines) + "\n"


def format_json(diagnostics: list) -> str:
    """One JSON array; each object has path, line, column, end_line, end_column, code, name,
    severity, message, fixable."""
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
        }
        for d in diagnostics
    ]
    return json.dumps(rows, indent=2) + "\n"


def _level(severity: str) -> str:
    return "error" if severity == "error" else "warning"


def _sarif_rules() -> list[dict]:
    from shapecheck.config import ENGINE_CODES
    from shapecheck.rules.base import all_rules

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


def format_sarif(diagnostics: list) -> str:
    """A SARIF 2.1.0 log with one run: every rule with its help text, and the results."""
    import shapecheck

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
                        "artifactLocation": {"uri": d.path, "uriBaseId": "%SRCROOT%"},
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
                        "version": shapecheck.__version__,
                        "informationUri": _INFO_URI,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


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
                f"file={_escape_property(d.path)}",
                f"line={d.line}",
                f"col={d.column}",
                f"endLine={d.end_line}",
                f"endColumn={d.end_column}",
                f"title={_escape_property(f'{d.code} ({d.name})')}",
            ]
        )
        lines.append(f"::{kind} {props}::{_escape_data(f'{d.code} {d.message}')}")
    return "".join(line + "\n" for line in lines)


def format_statistics(diagnostics: Iterable) -> str:
    """One line per code: count, code, ``[*]`` when fixable, name; most frequent first."""
    items = list(diagnostics)
    counts = Counter(d.code for d in items)
    names = {d.code: d.name for d in items}
    fixable = {d.code for d in items if d.fixable}
    lines = []
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "[*]" if code in fixable else "   "
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
