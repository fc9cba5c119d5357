"""Linting a notebook document of the editor: its code cells as one program, in cell order
(:func:`shapecheck.engine.notebooks.lint_cells`), each diagnostic given back on its cell."""

from __future__ import annotations

from shapecheck.engine.config import Settings, ignored_for_path, selected_codes
from shapecheck.engine.diagnostics import Diagnostic

__all__ = ["lint_notebook_cells"]


def lint_notebook_cells(
    path: str, cells: list[tuple[int, str, str]], settings: Settings,
) -> dict[str, list[Diagnostic]]:
    """The diagnostics of each code cell, by the cell's document uri; ``cells`` holds
    ``(number among all cells, 1-based; cell uri; source)`` in notebook order."""
    from shapecheck.engine.notebooks import lint_cells
    from shapecheck.engine.runner import _keep
    from shapecheck.rules.catalog import get_rule

    rules = [get_rule(code) for code in selected_codes(settings)]
    per_file = list(ignored_for_path(settings, path))
    found = lint_cells([(number, source) for number, _, source in cells], rules, path)
    uris = {number: uri for number, uri, _ in cells}
    by_cell: dict[str, list[Diagnostic]] = {}
    for diagnostic in found:
        uri = uris.get(getattr(diagnostic, "cell", None) or 0)
        if uri is not None and _keep(settings, diagnostic, per_file):
            by_cell.setdefault(uri, []).append(diagnostic)
    return by_cell
