"""Linting one open document for the language server, without any protocol types.

:func:`settings_for` finds the ``[tool.shapecheck]`` configuration of a document's path, as
``shapecheck lint PATH`` would; :func:`lint_document` lints the unsaved text (re-parsing only
what changed since the last version, :mod:`shapecheck.server.incremental_parse`, and taking the
offsets of the nodes it did not re-parse from the last version, :mod:`.offset_reuse`, and
replaying the analysis of the top-level statements the edit cannot affect,
:mod:`shapecheck.engine.unit_reuse`) and keeps, next to the diagnostics the CLI would print, the
text edit of each safe fix; :func:`noqa_edit` is the edit that suppresses one finding with
``# noqa: CODE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from shapecheck.engine.config import Selectors, Settings, build_settings
from shapecheck.engine.diagnostics import Diagnostic
from shapecheck.engine.runner import FixEdit
from shapecheck.server.incremental_parse import ParsedDocument, parse_document
from shapecheck.server.offset_reuse import carry_offsets

if TYPE_CHECKING:
    from shapecheck.engine.unit_reuse import UnitRecord

__all__ = ["DocumentLint", "lint_document", "noqa_edit", "settings_for"]


@dataclass
class DocumentLint:
    """The result of linting one version of a document."""

    diagnostics: list[Diagnostic]
    #: the safe fix of each diagnostic that has one, by ``(line, column, code)``
    fixes: dict[tuple[int, int, str], FixEdit] = field(default_factory=dict)
    #: the parsed text, for the next version's incremental parse (``None``: it does not parse)
    parsed: Optional[ParsedDocument] = None
    #: the trace of the analysis, for the next version's (``None``: the next one walks everything)
    record: Optional["UnitRecord"] = None


def settings_for(path: str) -> Settings:
    """The settings ``shapecheck lint PATH`` uses for ``path``; raises :class:`ConfigError`."""
    return build_settings(path, None, Selectors(), linted_paths=[path])


def _excluded(settings: Settings, path: str) -> bool:
    from shapecheck.engine.sources import glob_matches

    return any(glob_matches(glob, path, settings.root) for glob in settings.exclude)


def lint_document(path: str, text: str, settings: Settings,
                  previous: Optional[ParsedDocument] = None, record: Optional["UnitRecord"] = None) -> DocumentLint:
    """Lint ``text``, the content of ``path`` in the editor, under ``settings``: the diagnostics
    the CLI reports for the same text (``# noqa`` and ``per-file-ignores`` applied; none for an
    excluded path), with the safe fix of each. ``previous`` is the last version's parse,
    ``record`` the trace of its analysis (:class:`DocumentLint.record`)."""
    from shapecheck.engine.checker import analyze
    from shapecheck.engine.runner import lint_source
    from shapecheck.engine.unit_reuse import analyze_recording

    if _excluded(settings, path):
        return DocumentLint([])
    parsed: list[ParsedDocument] = []

    def parse(source: str):
        parsed.append(previous.edited(source) if previous is not None else parse_document(source))
        if previous is not None:
            carry_offsets(previous, parsed[-1])
        return parsed[-1].module

    records: list[Optional["UnitRecord"]] = []

    def analyse(module: Any, rules: Any, source: Optional[str], imported: Optional[dict]) -> Any:
        if imported:
            return analyze(module, rules, source, imported)
        checker, made = analyze_recording(module, rules, source, record)
        records.append(made)
        return checker

    found = lint_source(path, text, settings, parse, analyse)
    return DocumentLint(found.diagnostics, found.fixes, parsed[-1] if parsed else None,
                        records[-1] if records else None)


def noqa_edit(text: str, line: int, code: str) -> Optional[tuple[int, str]]:
    """The edit that silences ``code`` on ``line`` (1-based): ``(line, its new text without the
    line ending)``, adding the code to a ``# noqa`` list already there; ``None`` when the line
    cannot carry a comment (it ends inside a string or continues with a backslash)."""
    from shapecheck.engine.add_noqa import annotate

    new_text, added, _left = annotate(text, {line: {code}})
    if not added:
        return None
    new_lines = new_text.splitlines()
    return (line, new_lines[line - 1]) if line <= len(new_lines) else None
