"""The one Python program that the code cells of a notebook make, and the map back to the cells.

The cells are joined in order, each followed by a boundary comment line, so that facts flow from
cell to cell as they do in a kernel run top to bottom. IPython syntax is replaced line for line,
so the program parses and every line keeps its number in its cell:

- a line magic (``%matplotlib inline``, ``%time y = f(x)``), a shell escape (``!pip install x``,
  ``files = !ls``), a help line (``x?``, ``??x``, any line with a ``?`` outside strings and
  comments) and a statement that calls ``get_ipython()`` become ``pass`` at the line's own
  indentation (with its continuation lines);
- a cell magic whose body is Python (``%%time``, ``%%timeit``, ``%%capture``) has its first
  line replaced and its body kept; any other cell magic (``%%bash``, ``%%writefile``,
  ``%%html``...) blanks the whole cell, since its body is not Python.

A replaced line is restored when fixed cells are written back (:meth:`Program.cell_sources`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

#: Cell magics whose body is Python that the kernel runs as usual.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture"})

_BOUNDARY = "# <shapecheck: end of cell {}>"
_PLACEHOLDER = "pass  # <shapecheck: IPython line>"
_MAGIC_ASSIGN = re.compile(r"[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
#: Text that an IPython line has, one of them at least: a cell without any is plain Python.
_MARKS = ("%", "!", "?", "get_ipython(")
_STRING_START = re.compile(r"""[rRbBuUfF]{0,2}('''|\"\"\"|'|")""")


@dataclass
class _State:
    """Where the text scanned so far leaves the next line: bracket depth, an open triple-quoted
    string (its quote), a backslash continuation."""

    depth: int = 0
    quote: str = ""
    backslash: bool = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and not self.quote and not self.backslash


def _scan(line: str, state: _State) -> bool:
    """Advance ``state`` over ``line``; True when ``line`` has a ``?`` outside strings and
    comments (which no Python line has)."""
    question = False
    index = 0
    state.backslash = False
    while index < len(line):
        if state.quote:
            end = line.find(state.quote, index)
            while end != -1 and _escaped(line, end):
                end = line.find(state.quote, end + 1)
            if end == -1:
                if len(state.quote) == 1:  # an unclosed one-line string: the line is not Python
                    state.quote = ""
                return question
            index = end + len(state.quote)
            state.quote = ""
            continue
        char = line[index]
        if char == "#":
            break
        match = _STRING_START.match(line, index) if char in "'\"rRbBuUfF" else None
        if match is not None and (index == 0 or not (line[index - 1].isalnum() or line[index - 1] == "_")):
            state.quote = match.group(1)
            index = match.end()
            continue
        if char in "([{":
            state.depth += 1
        elif char in ")]}":
            state.depth = max(state.depth - 1, 0)
        elif char == "?":
            question = True
        index += 1
    state.backslash = line.rstrip("\r\n").endswith("\\") and not state.quote
    return question


def _escaped(line: str, index: int) -> bool:
    slashes = 0
    while index - slashes - 1 >= 0 and line[index - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def _backslash(line: str) -> bool:
    return line.rstrip().endswith("\\")


def _continued(line: str, state: _State) -> Optional[_State]:
    """The state after ``line`` inside a replaced statement, or ``None`` once it has ended."""
    if state.depth == 0 and not state.quote and state.backslash and not line.lstrip().startswith("get_ipython("):
        return _State(backslash=True) if _backslash(line) else None  # a shell or magic line continued
    _scan(line, state)
    return None if state.at_statement_start else state


def _is_ipython_line(stripped: str, has_question: bool) -> bool:
    return (
        stripped.startswith(("%", "!", "?"))
        or _MAGIC_ASSIGN.match(stripped) is not None
        or has_question
        or "get_ipython(" in stripped
    )


def python_lines(source: str) -> tuple[list[str], dict[int, str]]:
    """The lines of one cell with its IPython syntax replaced (see the module's docstring), and
    the original of each replaced line by its 0-based index."""
    lines = source.split("\n")
    if source.endswith("\n"):
        lines.pop()
    if not lines:
        lines = [""]
    first = lines[0].lstrip()
    replaced: dict[int, str] = {}
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].split() else ""
        if name not in PYTHON_CELL_MAGICS:
            return [""] * len(lines), dict(enumerate(lines))
        replaced[0] = lines[0]
        lines = [_PLACEHOLDER] + lines[1:]
    if not any(mark in source for mark in _MARKS):
        return lines, replaced
    out = list(lines)
    state = _State()
    skip: Optional[_State] = None  # the state inside a replaced statement that goes on
    for index, line in enumerate(lines):
        if index in replaced:
            continue
        if skip is not None:
            out[index], replaced[index] = "", line
            skip = _continued(line, skip)
            continue
        probe = _State(state.depth, state.quote, state.backslash)
        question = _scan(line, probe)
        stripped = line.lstrip()
        if state.at_statement_start and _is_ipython_line(stripped, question):
            out[index] = line[: len(line) - len(stripped)] + _PLACEHOLDER
            replaced[index] = line
            python = "get_ipython(" in stripped and not stripped.startswith(("%", "!", "?"))
            skip = _continued(line, _State()) if python else (_State(backslash=True) if _backslash(line) else None)
            continue
        state = probe
    return out, replaced


@dataclass(frozen=True)
class CodeCell:
    """A code cell as the program uses it: its number in the notebook (1-based, counting every
    cell, as ruff does), its source, the lines the program holds for it and the replaced lines."""

    number: int
    source: str
    lines: tuple[str, ...]
    replaced: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Program:
    """The Python text of a notebook's code cells and the map from its lines to the cells."""

    text: str
    cells: tuple[CodeCell, ...]
    #: for each program line (index = line - 1): (cell number, 1-based line in that cell)
    lines: tuple[tuple[int, int], ...]
    #: cell number -> the program line of its first line
    starts: dict = field(default_factory=dict)

    def position(self, line: int) -> tuple[int, int]:
        """``(cell number, line in cell)`` of program line ``line`` (1-based); a boundary line
        counts as the line after its cell's last one."""
        if not self.lines:
            return 1, line
        index = min(max(line, 1), len(self.lines)) - 1
        return self.lines[index]

    def program_line(self, cell: int, line: int) -> Optional[int]:
        """The program line of ``line`` (1-based) in cell ``cell``, or ``None``."""
        start = self.starts.get(cell)
        return None if start is None else start + line - 1

    def without(self, numbers: Iterable[int]) -> "Program":
        """The program with the cells numbered ``numbers`` blanked (left out of the analysis,
        their lines kept so that positions still map)."""
        dropped = set(numbers)
        cells = [
            CodeCell(c.number, c.source, tuple("" for _ in c.lines), dict(enumerate(c.source.split("\n"))))
            if c.number in dropped else c
            for c in self.cells
        ]
        return _assemble(cells)

    def cell_sources(self, fixed_text: str) -> Optional[dict[int, str]]:
        """The new source of each cell whose lines ``fixed_text`` (this program after fixes)
        changed, with its IPython lines restored; ``None`` when the cell boundaries cannot be
        found in it (then nothing should be written)."""
        lines = fixed_text.split("\n")
        changed: dict[int, str] = {}
        position = 0
        for cell in self.cells:
            boundary = _BOUNDARY.format(cell.number)
            try:
                end = lines.index(boundary, position)
            except ValueError:
                return None
            segment = lines[position:end]
            position = end + 1
            if tuple(segment) == cell.lines:
                continue
            if any(cell.lines[i] != (segment[i] if i < len(segment) else None) for i in cell.replaced):
                return None  # a fix moved a replaced line: it cannot be put back safely
            restored = [cell.replaced.get(i, line) for i, line in enumerate(segment)]
            text = "\n".join(restored)
            if cell.source.endswith("\n"):
                text += "\n"
            changed[cell.number] = text
        return changed


def _assemble(cells: Sequence[CodeCell]) -> Program:
    text_lines: list[str] = []
    positions: list[tuple[int, int]] = []
    starts: dict[int, int] = {}
    for cell in cells:
        starts[cell.number] = len(text_lines) + 1
        for number, line in enumerate(cell.lines, start=1):
            text_lines.append(line)
            positions.append((cell.number, number))
        text_lines.append(_BOUNDARY.format(cell.number))
        positions.append((cell.number, len(cell.lines) + 1))
    return Program("\n".join(text_lines) + "\n" if text_lines else "", tuple(cells), tuple(positions), starts)


def build_program(cells: Iterable[tuple[int, str]]) -> Program:
    """The program of code cells given as ``(cell number, source)`` in order (the numbers are
    the ones reports show: ruff's, counting every cell of the notebook from 1)."""
    built = []
    for number, source in cells:
        lines, replaced = python_lines(source)
        built.append(CodeCell(number, source, tuple(lines), replaced))
    return _assemble(built)


__all__ = ["CodeCell", "PYTHON_CELL_MAGICS", "Program", "build_program", "python_lines"]
