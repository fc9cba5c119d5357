"""The ``sarif`` output format: SARIF 2.1.0, as GitHub code scanning reads it.

One run: the tool with every rule (its help text and a ``helpUri``), the findings as results
(with a ``fixes`` entry for each safe fix, and ``relatedLocations`` for the places a finding
comes from: where a tensor was transposed, created or reduced), and the files that could not be read or parsed
(``SC000``) and the rules that crashed (``SC999``) as tool execution notifications of the
invocation rather than as results: they are about the run, not about the code. Columns count
Unicode code points (``columnKind``), as Python's strings do. Paths are relative URI references
against ``%SRCROOT%`` (or ``file:`` URIs when absolute), with every byte outside RFC 3986's
unreserved set percent-encoded, so that a space or a ``#`` in a path stays a valid URI. In a
notebook the lines count in its code cells joined, as ruff's SARIF gives them, and a result's
``properties`` name the cell (``{"cell": N}``, counting every cell from 1).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Optional

from shapecheck.engine.diagnostics import ENGINE_CODES
from shapecheck.version import __version__

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_DRIVE = re.compile(r"^[A-Za-z]:/")


def help_uri(info_uri: str, code: str) -> str:
    """Where a rule's documentation is published: its row of the rule table in the README, the
    project's page ``info_uri`` on the package index, whose explicit anchor ``<a id="sc101">``
    (:func:`shapecheck.frontends.docs.rule_anchor`) the index keeps; ``shapecheck rule CODE``
    prints the whole page."""
    return f"{info_uri}#{code.lower()}"


def level(severity: str) -> str:
    """The SARIF level of a severity."""
    return "error" if severity == "error" else "warning"


def _strip_ticks(text: str) -> str:
    return text.replace("`", "")


def _rules(info_uri: str) -> list[dict]:
    from shapecheck.rules.catalog import all_rules

    from shapecheck.frontends.engine_codes import engine_codes

    rules = []
    for page in engine_codes():
        rules.append({
            "id": page.code, "name": page.name,
            "shortDescription": {"text": _strip_ticks(page.summary)},
            "help": {"text": page.doc.strip(), "markdown": page.doc.strip()},
            "helpUri": help_uri(info_uri, page.code),
            "defaultConfiguration": {"level": level(page.severity)},
        })
    for rule in all_rules():
        rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": _strip_ticks(rule.summary)},
            "fullDescription": {"text": _strip_ticks(rule.summary)},
            "help": {"text": rule.doc, "markdown": rule.doc},
            "helpUri": help_uri(info_uri, rule.code),
            "defaultConfiguration": {"level": level(rule.severity), "enabled": bool(rule.default_enabled)},
            "properties": {"fixable": bool(rule.fixable), "default_enabled": bool(rule.default_enabled)},
        })
    return sorted(rules, key=lambda r: r["id"])


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


def _region(d) -> dict:
    return {
        "startLine": d.line,
        "startColumn": d.column,
        "endLine": max(d.end_line, d.line),
        "endColumn": d.end_column if d.end_line > d.line else max(d.end_column, d.column),
    }


def _related(path: str, number: int, place) -> dict:
    """A SARIF ``relatedLocations`` entry: where the finding comes from, with its label (and,
    in a notebook, the cell it lies in)."""
    entry: dict = {
        "id": number,
        "physicalLocation": {"artifactLocation": sarif_location(path), "region": _region(place)},
        "message": {"text": place.label},
    }
    if getattr(place, "cell", None) is not None:
        entry["properties"] = {"cell": place.cell}
    return entry


def _fix_edits(diagnostics: list) -> dict:
    """The safe fix of each fixable finding, by ``(path, line, column, code)``, computed from
    the files as they are now (a file that cannot be read again gets no fixes)."""
    from shapecheck.engine.runner import fix_edits
    from shapecheck.engine.sources import SourceError, decode_source
    from shapecheck.rules.catalog import get_rule

    wanted: dict[str, set[str]] = {}
    for d in diagnostics:
        if d.fixable and d.cell is None:  # a notebook's fixes are not given as text edits
            wanted.setdefault(d.path, set()).add(d.code)
    edits = {}
    for path, codes in wanted.items():
        try:
            with open(path, "rb") as handle:
                text = decode_source(handle.read()).text
        except (OSError, SourceError):
            continue
        rules = [rule for rule in (get_rule(code) for code in sorted(codes)) if rule is not None]
        for (line, column, code), edit in fix_edits(text, rules, path).items():
            edits[(path, line, column, code)] = edit
    return edits


def _fix(d, edit) -> dict:
    return {
        "description": {"text": f"Apply the safe fix of {d.code} ({d.name})"},
        "artifactChanges": [{
            "artifactLocation": sarif_location(d.path),
            "replacements": [{
                "deletedRegion": {
                    "startLine": edit.line, "startColumn": edit.column,
                    "endLine": edit.end_line, "endColumn": edit.end_column,
                },
                "insertedContent": {"text": edit.text},
            }],
        }],
    }


def _notification(d, index: Optional[int]) -> dict:
    note: dict = {
        "level": "error",
        "message": {"text": d.message},
        "locations": [{"physicalLocation": {"artifactLocation": sarif_location(d.path), "region": _region(d)}}],
        "descriptor": {"id": d.code},
    }
    if index is not None:
        note["associatedRule"] = {"id": d.code, "index": index}
    return note


def format_sarif(diagnostics: list, info_uri: str) -> str:
    """A SARIF 2.1.0 log with one run: every rule with its help, the findings as results, and
    the engine's own diagnostics as tool execution notifications; ``info_uri``: the project's
    page."""
    rules = _rules(info_uri)
    index = {r["id"]: i for i, r in enumerate(rules)}
    edits = _fix_edits(diagnostics) if any(d.fixable for d in diagnostics) else {}
    from shapecheck.engine.notebook_core import concatenated

    diagnostics = concatenated(diagnostics)
    results, notifications = [], []
    for d in diagnostics:
        if d.code in ENGINE_CODES:
            notifications.append(_notification(d, index.get(d.code)))
            continue
        result: dict = {
            "ruleId": d.code,
            "level": level(d.severity),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {"artifactLocation": sarif_location(d.path), "region": _region(d)}}],
        }
        if d.cell is not None:
            result["properties"] = {"cell": d.cell}
        if d.related:
            result["relatedLocations"] = [_related(d.path, i, place) for i, place in enumerate(d.related)]
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        edit = edits.get((d.path, d.line, d.column, d.code))
        if edit is not None:
            result["fixes"] = [_fix(d, edit)]
        results.append(result)
    invocation = {
        "executionSuccessful": not any(d.code == "SC999" for d in diagnostics),
        "toolExecutionNotifications": notifications,
    }
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "shapecheck", "version": __version__, "informationUri": info_uri, "rules": rules,
            }},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"
