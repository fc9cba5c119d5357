"""Linting one open document for the language server, without any protocol types.

:func:`settings_for` finds the ``[tool.shapecheck]`` configuration of a document's path, as
``shapecheck lint PATH`` would; :func:`lint_document` lints the unsaved text (re-parsing only
what changed since the last version, :mod:`shapecheck.server.incremental_parse`) and keeps, next
to the diagnostics the CLI would print, the text edit of each safe fix; :func:`noqa_edit` is the
edit that suppresses one finding with ``# noqa: CODE``.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Optional

from shapecheck.engine.config import Selectors, Settings, build_settings, ignored_for_path
from shapecheck.engine.diagnostics import PARSE_ERROR, Diagnostic
from shapecheck.engine.runner import FixEdit
from shapecheck.server.incremental_parse import ParsedDocument, parse_document

__all__ = ["DocumentLint", "lint_document", "noqa_edit", "settings_for"]


@dataclass
class DocumentLint:
    """The result of linting one version of a document."""

    diagnostics: list[Diagnostic]
    #: the safe fix of each diagnostic that has one, by ``(line, column, code)``
    fixes: dict[tuple[int, int, str], FixEdit] = field(default_factory=dict)
    #: the parsed text, for the next version's incremental parse (``None``: it does not parse)
    parsed: Optional[ParsedDocument] = None


def settings_for(path: str) -> Settings:
    """The settings ``shapecheck lint PATH`` uses for ``path``; raises :class:`ConfigError`."""
    return build_settings(path, None, Selectors(), linted_paths=[path])


def _excluded(settings: Settings, path: str) -> bool:
    from shapecheck.engine.sources import glob_matches

    return any(glob_matches(glob, path, settings.root) for glob in settings.exclude)


def _linter(settings: Settings):
    from shapecheck.engine.config import selected_codes
    from shapecheck.engine.runner import _Linter
    from shapecheck.rules.catalog import get_rule

    return _Linter([get_rule(code) for code in selected_codes(settings)])


def lint_document(path: str, text: str, settings: Settings,
                  previous: Optional[ParsedDocument] = None) -> DocumentLint:
    """Lint ``text``, the content of ``path`` in the editor, under ``settings``: the diagnostics
    the CLI reports for the same text (``# noqa`` and ``per-file-ignores`` applied; none for an
    excluded path), with the safe fix of each. ``previous`` is the last version's parse."""
    from shapecheck.engine.guards import call_with_fixed_stack

    if _excluded(settings, path):
        return DocumentLint([])
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return call_with_fixed_stack(_lint, path, text, settings, previous)
    finally:
        if was_enabled:
            gc.enable()


def _lint(path: str, text: str, settings: Settings, previous: Optional[ParsedDocument]) -> DocumentLint:
    from shapecheck.engine import checker
    from shapecheck.engine.guards import nesting_problem
    from shapecheck.engine.positions import node_positions
    from shapecheck.engine.runner import _engine_diagnostic, _keep, _syntax_error

    per_file = list(ignored_for_path(settings, path))
    too_deep = nesting_problem(text)
    if too_deep is not None:
        message, line, column = too_deep
        found = [_engine_diagnostic(path, PARSE_ERROR, message, line, column)]
        return DocumentLint([d for d in found if _keep(settings, d, per_file)])
    try:
        parsed = previous.edited(text) if previous is not None else parse_document(text)
    except Exception as exc:  # the parser's syntax error, or its other failures
        found = [_syntax_error(path, text, exc)]
        return DocumentLint([d for d in found if _keep(settings, d, per_file)])
    linter = _linter(settings)
    module = parsed.module
    rules = [cls() for cls in linter.rule_classes]
    try:
        ctx = checker.analyze(module, rules, text)
    except Exception as exc:
        found = [_engine_diagnostic(path, "SC999", f"internal error in the analysis walker: "
                                    f"{type(exc).__name__}: {' '.join(str(exc).split())}")]
        return DocumentLint(found, parsed=parsed)
    crashes = []
    for code in dict.fromkeys(code for code, _ in ctx.crashes):
        error = next(e for c, e in ctx.crashes if c == code)
        name = linter.meta.get(code, ("?", "error"))[0]
        crashes.append(_engine_diagnostic(path, "SC999", f"internal error in rule {code} ({name}): "
                                          f"{type(error).__name__}: {' '.join(str(error).split())}"))
    findings = ctx.findings
    ctx.release()
    if findings or linter.reports_unused:
        kept_findings, diagnostics = linter._position(path, text, module, findings)
    else:
        kept_findings, diagnostics = [], []
    fixable = [(f, d) for f, d in zip(kept_findings, diagnostics) if f.fix is not None and f.fix.safe]
    spans = node_positions(module, [f.fix.node for f, _ in fixable])
    fixes = {}
    for finding, diag in fixable:
        span = spans.get(finding.fix.node)
        if span is not None:
            line, col, end_line, end_col = span
            replacement = module.code_for_node(finding.fix.replacement)
            fixes[(diag.line, diag.column, diag.code)] = FixEdit(line, col + 1, end_line, end_col + 1, replacement)
    kept = [d for d in diagnostics + crashes if _keep(settings, d, per_file)]
    kept.sort(key=Diagnostic.sort_key)
    return DocumentLint(kept, fixes, parsed)


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
