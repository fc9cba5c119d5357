"""Notebooks in the engine: reading one, the program its code cells make, positions in cells.

The core that the runner uses (it imports nothing of the runner): :func:`lint_data` lints a
notebook file's bytes with the runner's linter; :func:`load`, :func:`to_cells`,
:func:`write_cells` are the pieces. The public API for other front ends, with the linting
functions, is :mod:`shapecheck.engine.notebooks`, where the behaviour is described.
"""

from __future__ import annotations

import re
from ast import PyCF_ALLOW_TOP_LEVEL_AWAIT, PyCF_ONLY_AST
from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional, Sequence

from shapecheck.engine.diagnostics import ENGINE_CODES, INTERNAL_ERROR, PARSE_ERROR, Diagnostic, Related
from shapecheck.engine.file_results import FileResult
from shapecheck.engine.notebook_json import NotebookError, NotebookFile, read_notebook, replace_sources
from shapecheck.engine.notebook_program import Program, build_program
from shapecheck.engine.sources import Decoded


#: The suffix of the notebooks a folder walk lints.
NOTEBOOK_SUFFIX = ".ipynb"
#: The ``SC000`` of fixes whose cells cannot be found again in the fixed program.
NOT_WRITTEN = "not fixed: the fixed cells could not be mapped back to the notebook; run again"


def is_notebook(path: str) -> bool:
    """True when ``path`` names a Jupyter notebook (by its suffix)."""
    return path.lower().endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class Notebook:
    """A notebook read from its JSON text: the file (cells, where their sources lie) and the
    program its code cells make."""

    file: NotebookFile
    program: Program


def load(text: str) -> Notebook:
    """The notebook whose JSON text is ``text``; raises
    :class:`~shapecheck.engine.notebook_json.NotebookError` (message, line, column)."""
    file = read_notebook(text)
    return Notebook(file, build_program((cell.number, cell.source) for cell in file.code_cells))


def code_size(data: bytes) -> Optional[int]:
    """The bytes of code in the notebook file whose bytes are ``data`` (its code cells, UTF-8),
    or ``None`` when it does not read as a notebook (linting it then says why)."""
    try:
        file = read_notebook(decode(data)[0])
    except NotebookError:
        return None
    return sum(len(cell.source.encode("utf-8")) for cell in file.code_cells)


def decode(data: bytes) -> tuple[str, bool]:
    """The text of a notebook file's bytes (UTF-8, as the format requires) and whether it
    started with a byte-order mark; raises :class:`NotebookError` with the position of a bad byte."""
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8-sig"), bom
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotebookError(
            f"cannot decode the notebook as UTF-8: byte 0x{data[exc.start]:02x} is invalid", line, column
        ) from None


def to_cells(program: Program, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` of the program text with their positions in the cells (``cell`` set, lines
    counted in the cell). A span that runs into the next cell ends at its start; an internal error
    with no position keeps none."""
    mapped = []
    for d in diagnostics:
        if d.code == INTERNAL_ERROR and (d.line, d.column) == (1, 1):
            mapped.append(d)
            continue
        cell, line = program.position(d.line)
        end_cell, end_line = program.position(d.end_line)
        end_column = d.end_column
        if end_cell != cell:
            end_line, end_column = line, d.column + 1
        mapped.append(replace(
            d, line=line, end_line=end_line, end_column=end_column, cell=cell,
            related=tuple(_place_in(program, place) for place in d.related),
            message=_calls_in_cells(program, cell, d.message),
        ))
    return mapped


#: The note of a finding made with the arguments of calls (engine/contexts.py), program lines.
_CALL_NOTE = re.compile(r"\(with the arguments of the (calls?) on (lines?) (\d+(?:, \d+)*)\)$")


def _calls_in_cells(program: Program, cell: int, message: str) -> str:
    """``message`` with its call note's lines counted in ``cell``, or named ``cell N line L``
    when a call lies in another cell."""
    match = _CALL_NOTE.search(message)
    if match is None:
        return message
    return message[:match.start()] + _call_note(program, cell, match)


def _call_note(program: Program, cell: int, match: "re.Match[str]") -> str:
    places = [program.position(int(n)) for n in match.group(3).split(", ")]
    if all(place_cell == cell for place_cell, _ in places):
        numbers = ", ".join(str(n) for _, n in places)
        return f"(with the arguments of the {match.group(1)} on {match.group(2)} {numbers})"
    named = ", ".join(f"cell {c} line {n}" for c, n in places)
    return f"(with the arguments of the {match.group(1)} in {named})"


def _place_in(program: Program, place: Related) -> Related:
    """A related place of a finding with its cell set and its lines counted in that cell (a
    span that runs into the next cell ends on its first line)."""
    place_cell, line = program.position(place.line)
    end_cell, end_line = program.position(place.end_line)
    if end_cell != place_cell:
        return replace(place, line=line, end_line=line, end_column=place.column + 1, cell=place_cell)
    return replace(place, line=line, end_line=end_line, cell=place_cell)


def concatenated(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` with the lines of those in notebooks counted in the code cells joined as
    ruff joins them (see :func:`concatenated_offsets`), ``cell`` kept; the others as they are."""
    offsets: dict[str, dict[int, int]] = {}
    out = []
    for d in diagnostics:
        if d.cell is None:
            out.append(d)
            continue
        if d.path not in offsets:
            offsets[d.path] = concatenated_offsets(d.path)
        shift = offsets[d.path].get(d.cell)
        if shift is None:
            out.append(d)
            continue
        related = tuple(_shifted(place, offsets[d.path].get(place.cell or d.cell, shift)) for place in d.related)
        out.append(replace(d, line=d.line + shift, end_line=d.end_line + shift, related=related))
    return out


def _shifted(place: Related, shift: int) -> Related:
    return replace(place, line=place.line + shift, end_line=place.end_line + shift)


def analyse(linter: Any, path: str, program: Program):
    """Analyse ``program`` with ``linter`` (the runner's: its ``analyze``), leaving out each code
    cell that does not parse:
    ``(program analysed, module, findings, diagnostics, SC000 of the cells left out)``."""
    dropped: list[Diagnostic] = []
    while True:
        module, findings, diagnostics = linter.analyze(path, program.text)
        if module is not None:
            return program, module, findings, diagnostics, dropped
        alone = _cells_failing_alone(linter, path, program, {d.cell for d in dropped})
        if alone:  # Jupyter compiles each cell by itself: a cell that does not parse alone is out
            dropped.extend(alone)
            program = program.without(d.cell for d in dropped if d.cell is not None)
            continue
        errors = [d for d in to_cells(program, diagnostics) if d.code == PARSE_ERROR]
        if not errors or errors[0].cell in {d.cell for d in dropped}:
            return program, None, [], to_cells(program, diagnostics), dropped
        dropped.append(errors[0])
        program = program.without(d.cell for d in dropped if d.cell is not None)


def _cells_failing_alone(linter: Any, path: str, program: Program, dropped: set) -> list[Diagnostic]:
    """The ``SC000`` of each code cell (not in ``dropped``) that does not parse by itself, with its
    position and message counted in the cell (a ``def`` whose body is only comments at the end of
    a cell fails there, not at the next cell's first line)."""
    failing = []
    for cell in program.cells:
        if cell.number in dropped:
            continue
        text = "\n".join(cell.lines) + "\n"
        try:
            compile(text, path, "exec", flags=PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
            continue
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        module, refused = linter.parse(path, text)  # what libcst says: the same words as a .py file
        if module is None and refused:
            failing.append(replace(refused[0], cell=cell.number))
    return failing


def _engine(path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    return Diagnostic(path, line, column, line, column, PARSE_ERROR, ENGINE_CODES[PARSE_ERROR], "error", message)


def lint_data(linter: Any, path: str, data: bytes, fix: bool = False, ignore: Sequence[str] = ()) -> FileResult:
    """Lint the notebook file ``path`` whose bytes are ``data`` with the runner's ``linter``;
    with ``fix``, also fix it to a fixed point (no fix of a finding that ``ignore``, the
    per-file-ignores, covers)."""
    result = FileResult(path)
    try:
        text, bom = decode(data)
        notebook = load(text)
    except NotebookError as exc:
        result.diagnostics = [_engine(path, exc.message, exc.line, exc.column)]
        return result
    if not notebook.file.python:
        return result
    program, module, findings, diagnostics, dropped = analyse(linter, path, notebook.program)
    mapped = to_cells(program, diagnostics) + dropped
    result.diagnostics = mapped
    if not fix or module is None:
        return result
    result.decoded = Decoded(text, "utf-8", bom)
    result.original_text = text
    result.original_diagnostics = mapped
    fixed, _, _, new_diagnostics, applied = linter.fix_to_fixed_point(
        path, program.text, module, findings, diagnostics, ignore, None
    )
    if fixed == program.text:
        return result
    sources = program.cell_sources(fixed)
    if sources is None:
        result.diagnostics = mapped + [_engine(path, NOT_WRITTEN)]
        return result
    updated = {cell.number: sources.get(cell.number, cell.source) for cell in notebook.file.code_cells}
    new_program = build_program(updated.items()).without(d.cell for d in dropped if d.cell is not None)
    result.diagnostics = to_cells(new_program, new_diagnostics) + dropped
    result.fixed_text = replace_sources(notebook.file, sources)
    result.fixes_applied = applied
    return result


def write_cells(notebook: Notebook, sources: dict[int, str]) -> str:
    """The notebook's JSON text with the cells numbered in ``sources`` given those sources;
    every other byte of the file is kept."""
    return replace_sources(notebook.file, sources)


def cell_lines(text: str) -> dict[int, list[str]]:
    """The lines of each cell of the notebook whose JSON text is ``text``, by cell number (for
    reports that show source lines); empty when the text is not a notebook."""
    try:
        file = read_notebook(text)
    except NotebookError:
        return {}
    return {cell.number: cell.source.split("\n") for cell in file.cells}


def concatenated_offsets(path: str) -> dict[int, int]:
    """For each code cell of the notebook file ``path``, by number: how many lines come before
    it when the code cells are joined as ruff joins them (each cell, then a newline). Line ``l``
    of cell ``c`` is line ``offsets[c] + l`` there: the position ruff's SARIF and GitHub reports
    give. Empty when the file cannot be read as a notebook."""
    try:
        with open(path, "rb") as handle:
            file = read_notebook(decode(handle.read())[0])
    except (OSError, NotebookError):
        return {}
    offsets: dict[int, int] = {}
    before = 0
    for code in file.code_cells:
        offsets[code.number] = before
        before += code.source.count("\n") + 1
    return offsets


__all__ = [
    "NOTEBOOK_SUFFIX",
    "NOT_WRITTEN",
    "Notebook",
    "NotebookError",
    "analyse",
    "cell_lines",
    "concatenated",
    "concatenated_offsets",
    "decode",
    "is_notebook",
    "lint_data",
    "load",
    "to_cells",
    "write_cells",
]
