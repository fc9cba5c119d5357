"""Linting Jupyter notebooks: the public API that the command line and the language server use.

A notebook's code cells are analysed as one program in cell order
(:mod:`shapecheck.engine.notebook_program`: IPython magics, shell escapes and help lines are
replaced line for line), read with plain :mod:`json` (:mod:`shapecheck.engine.notebook_json`: no
Jupyter install needed, and the text is kept so that fixes change only the ``source`` of the cells
they touch). Every diagnostic names its cell (``Diagnostic.cell``: the 1-based number among
all the cells of the notebook, markdown ones included, as ruff counts) and its line and column in
that cell. ``# noqa`` comments apply to their own cell line. A code cell that does not parse
gives an ``SC000`` at its line and is left out, so the other cells are still linted; a file that
is not valid JSON gives an ``SC000`` at the JSON error.

For a caller that has the notebook's text: :func:`lint_notebook`, :func:`fix_notebook`. For one
that has the cells (an editor's notebook document): :func:`lint_cells`, :func:`hover_in_cells`
(:func:`parse_cells`: the cells parsed as one program, not analysed). Lower level
(:mod:`shapecheck.engine.notebook_core`, which the runner uses): :func:`load` (the cells and the
program), :func:`to_cells` (program positions to cell positions), :func:`write_cells` (changed
cell sources into the JSON text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import libcst as cst

from shapecheck.engine.diagnostics import Diagnostic
from shapecheck.engine.notebook_core import (
    NOTEBOOK_SUFFIX,
    Notebook,
    NotebookError,
    analyse,
    cell_lines,
    concatenated,
    decode,
    is_notebook,
    lint_data,
    load,
    to_cells,
    write_cells,
)
from shapecheck.engine.notebook_program import Program, build_program
from shapecheck.engine.runner import FixEdit, _Linter, safe_edits


def lint_notebook(text: str, rule_classes: list, path: str = "<notebook>") -> list[Diagnostic]:
    """Diagnostics (with ``cell`` set, sorted) of the notebook whose JSON text is ``text`` under
    the given rule classes (``# noqa`` applied); a text that is not a notebook gives one ``SC000``."""
    result = lint_data(_Linter(rule_classes), path, text.encode("utf-8"))
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


def lint_cells(cells: Sequence[tuple[int, str]], rule_classes: list, path: str = "<notebook>") -> list[Diagnostic]:
    """Diagnostics (sorted) of code cells given as ``(cell number, source)`` in notebook order;
    each names its cell by the number given here (``Diagnostic.cell``), lines count in the cell."""
    program, _, _, diagnostics, dropped = analyse(_Linter(rule_classes), path, build_program(cells))
    return sorted(to_cells(program, diagnostics) + dropped, key=Diagnostic.sort_key)


@dataclass
class CellsLint:
    """What :func:`lint_cells_with_fixes` found in a notebook's code cells."""

    #: the diagnostics, sorted, each on its cell
    diagnostics: list[Diagnostic]
    #: the safe fix of each diagnostic that has one whose edit lies in the diagnostic's own cell,
    #: by ``(cell, line, column, code)`` of the diagnostic; the edit's lines count in that cell
    fixes: dict[tuple[int, int, int, str], FixEdit] = field(default_factory=dict)


def lint_cells_with_fixes(cells: Sequence[tuple[int, str]], rule_classes: list,
                          path: str = "<notebook>") -> CellsLint:
    """:func:`lint_cells`, with the safe fix of each finding as an edit of its cell (for an
    editor's quick fixes)."""
    program, module, findings, diagnostics, dropped = analyse(_Linter(rule_classes), path, build_program(cells))
    fixes: dict[tuple[int, int, int, str], FixEdit] = {}
    if module is not None:
        for (line, column, code), edit in safe_edits(module, findings, diagnostics).items():
            cell, cell_line = program.position(line)
            start_cell, start = program.position(edit.line)
            end_cell, end = program.position(edit.end_line)
            if start_cell == end_cell == cell:
                fixes[(cell, cell_line, column, code)] = FixEdit(start, edit.column, end, edit.end_column, edit.text)
    found = sorted(to_cells(program, diagnostics) + dropped, key=Diagnostic.sort_key)
    return CellsLint(found, fixes)


class _ParseOnly(_Linter):
    """The runner's linter stopped after its parse: the module of a text, or the ``SC000`` of a
    text that does not parse, and no analysis (the walk and the rules never run)."""

    def __init__(self) -> None:
        super().__init__([])

    def analyze(self, path: str, text: str, imported: Optional[dict] = None, parse: Any = None):
        """``(module, [], [])``, or ``(None, [], [SC000])`` when ``text`` does not parse (the
        same guard and parser as :meth:`_Linter.analyze`)."""
        module, refused = self.parse(path, text, parse)
        return module, [], refused


def parse_cells(cells: Sequence[tuple[int, str]]) -> tuple[Program, Optional[cst.Module]]:
    """The code cells given as ``(cell number, source)`` in notebook order, parsed as one program
    without analysing it: the program (the cells that do not parse left out, as the lint leaves
    them out) and its module (``None`` when leaving cells out does not make it parse). For a
    caller that then runs one analysis of its own (a hover)."""
    program, module, _, _, _ = analyse(_ParseOnly(), "<notebook>", build_program(cells))
    return program, module


def hover_in_cells(cells: Sequence[tuple[int, str]], cell: int, line: int, column: int,
                   parsed: Optional[tuple[Program, Optional[cst.Module]]] = None,
                   ) -> Optional[tuple[str, tuple[int, int, int, int]]]:
    """The hover at ``line`` (1-based), ``column`` (0-based) of code cell ``cell``, the code cells
    given as ``(cell number, source)`` in notebook order and analysed as one program (so the
    facts of earlier cells reach it): ``(markdown, span in that cell)`` as
    :func:`shapecheck.engine.hover_facts.hover_markdown` gives it, or ``None``. The cells are
    parsed (:func:`parse_cells`; ``parsed``: what it gave for these cells, to reuse) and
    analysed once, by the hover's probe."""
    from shapecheck.engine.hover_facts import hover_markdown

    program, module = parsed if parsed is not None else parse_cells(cells)
    start = program.program_line(cell, line)
    if module is None or start is None or program.position(start) != (cell, line):
        return None
    shown = hover_markdown(module, start, column, program.text)
    if shown is None:
        return None
    markdown, (first, first_column, last, last_column) = shown
    span_cell, span_line = program.position(first)
    end_cell, end_line = program.position(last)
    if span_cell != cell:
        return None
    if end_cell != cell:
        end_line, last_column = span_line, first_column + 1
    return markdown, (span_line, first_column, end_line, last_column)


def fix_notebook(
    text: str, rule_classes: list, path: str = "<notebook>", unsafe_fixes: bool = False
) -> tuple[str, int]:
    """The notebook's JSON text after every safe fix of the given rules (and the unsafe ones
    with ``unsafe_fixes``), changing only the ``source`` of fixed cells, and how many fixes
    were applied; a text that is not a notebook comes back unchanged."""
    result = lint_data(_Linter(rule_classes, unsafe_fixes), path, text.encode("utf-8"), fix=True)
    return result.after_fixes(text)


__all__ = [
    "CellsLint",
    "NOTEBOOK_SUFFIX",
    "Notebook",
    "NotebookError",
    "cell_lines",
    "concatenated",
    "decode",
    "fix_notebook",
    "hover_in_cells",
    "is_notebook",
    "lint_cells",
    "lint_cells_with_fixes",
    "lint_notebook",
    "load",
    "parse_cells",
    "to_cells",
    "write_cells",
]
