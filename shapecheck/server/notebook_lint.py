"""Linting a notebook document of the editor: its code cells as one program, in cell order
(:func:`shapecheck.engine.notebooks.lint_cells_with_fixes`), each diagnostic and its safe fix
given back on its cell; and the hover of a position in a cell, with the facts of earlier cells
(the cells' parse kept for the next hover while they do not change)."""

from __future__ import annotations

from typing import Any, Optional

from shapecheck.engine.config import Settings, selected_codes
from shapecheck.server.document_lint import DocumentLint

__all__ = ["hover_in_notebook", "lint_notebook_cells"]

#: the cells of the last notebook hovered, parsed as one program (hovers between two edits reuse
#: it; only the server's one analysis thread reads and writes it)
_LAST_PARSE: dict[tuple[tuple[int, str], ...], tuple[Any, Any]] = {}


def lint_notebook_cells(
    path: str, cells: list[tuple[int, str, str]], settings: Settings,
) -> dict[str, DocumentLint]:
    """The lint of each code cell (its diagnostics, and the safe fixes by the diagnostic's
    ``(line, column, code)`` in the cell), by the cell's document uri; ``cells`` holds
    ``(number among all cells, 1-based; cell uri; source)`` in notebook order."""
    from shapecheck.engine.notebooks import lint_cells_with_fixes
    from shapecheck.engine.runner import keeps
    from shapecheck.rules.catalog import get_rule

    rules = [get_rule(code) for code in selected_codes(settings)]
    kept = keeps(settings, path)
    found = lint_cells_with_fixes([(number, source) for number, _, source in cells], rules, path)
    uris = {number: uri for number, uri, _ in cells}
    by_cell: dict[str, DocumentLint] = {uri: DocumentLint([]) for _, uri, _ in cells}
    for diagnostic in found.diagnostics:
        uri = uris.get(diagnostic.cell or 0)
        if uri is None or not kept(diagnostic):
            continue
        lint = by_cell[uri]
        lint.diagnostics.append(diagnostic)
        fix = found.fixes.get((diagnostic.cell or 0, diagnostic.line, diagnostic.column, diagnostic.code))
        if fix is not None:
            lint.fixes[(diagnostic.line, diagnostic.column, diagnostic.code)] = fix
    return by_cell


def hover_in_notebook(
    cells: list[tuple[int, str, str]], cell_uri: str, line: int, column: int,
) -> Optional[tuple[str, tuple[int, int, int, int]]]:
    """The hover at ``line`` (1-based), ``column`` (0-based) of the code cell ``cell_uri``, the
    cells given as for :func:`lint_notebook_cells`: ``(markdown, span in the cell)`` or ``None``."""
    from shapecheck.engine.notebooks import hover_in_cells, parse_cells

    number = next((n for n, uri, _ in cells if uri == cell_uri), None)
    if number is None:
        return None
    sources = tuple((n, source) for n, _, source in cells)
    parsed = _LAST_PARSE.get(sources)
    if parsed is None:
        parsed = parse_cells(sources)
        _LAST_PARSE.clear()
        _LAST_PARSE[sources] = parsed
    return hover_in_cells(sources, number, line, column, parsed)
