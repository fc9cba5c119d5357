"""Reading a Jupyter notebook (``.ipynb``, nbformat 4) with plain :mod:`json`, and writing
changed cell sources back into the original JSON text.

Only the ``source`` values of the changed cells are replaced, in place, in the text that was
read: outputs, metadata, cell ids, the indentation, the key order, escapes and the trailing newline
stay byte for byte as they were. A new ``source`` keeps the shape the old one had (a list of
lines or one string) and the layout of its list (the whitespace after ``[``, between items and
before ``]``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Optional

from shapecheck.engine.sources import SourceError

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class NotebookError(SourceError):
    """A file that is not a readable notebook: the message and a 1-based position."""


@dataclass(frozen=True)
class RawCell:
    """One cell of a notebook: its 1-based number among all cells, its type, its source text
    (a list source joined), and whether the file holds the source as a list of lines."""

    number: int
    kind: str
    source: str
    as_list: bool


@dataclass(frozen=True)
class NotebookFile:
    """A notebook as read: its JSON text, its cells and whether its kernel runs Python."""

    text: str
    cells: tuple[RawCell, ...]
    python: bool

    def source_spans(self) -> dict[int, tuple[int, int]]:
        """Where each cell's ``source`` value lies in the text, by cell number (found when
        written back only: most runs never need it)."""
        return _source_spans(self.text, _WS.match(self.text).end())  # type: ignore[union-attr]

    @property
    def code_cells(self) -> tuple[RawCell, ...]:
        """The code cells, in order."""
        return tuple(cell for cell in self.cells if cell.kind == "code")


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _expect(text: str, index: int, char: str) -> int:
    index = _WS.match(text, index).end()  # type: ignore[union-attr]  # always matches
    if text[index:index + 1] != char:
        raise ValueError(index)
    return index + 1


def _object_members(text: str, index: int):
    """``(key, value start, value end)`` of each member of the object that opens at ``index``;
    the values are skipped with the standard decoder."""
    index = _expect(text, index, "{")
    index = _WS.match(text, index).end()  # type: ignore[union-attr]
    if text[index:index + 1] == "}":
        return
    while True:
        index = _expect(text, index, '"')
        key, index = json.decoder.scanstring(text, index)  # type: ignore[attr-defined]
        index = _expect(text, index, ":")
        start = _WS.match(text, index).end()  # type: ignore[union-attr]
        end = _DECODER.raw_decode(text, start)[1]
        yield key, start, end
        index = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text[index:index + 1] == "}":
            return
        index = _expect(text, index, ",")


def _array_items(text: str, index: int):
    """``(start, end)`` of each item of the array that opens at ``index``."""
    index = _expect(text, index, "[")
    index = _WS.match(text, index).end()  # type: ignore[union-attr]
    if text[index:index + 1] == "]":
        return
    while True:
        start = _WS.match(text, index).end()  # type: ignore[union-attr]
        end = _DECODER.raw_decode(text, start)[1]
        yield start, end
        index = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text[index:index + 1] == "]":
            return
        index = _expect(text, index, ",")


def _source_spans(text: str, start: int) -> dict[int, tuple[int, int]]:
    """Cell number -> ``(start, end)`` of its ``source`` value; ``start``: where the top-level
    object opens."""
    cells_span = None
    for key, value_start, value_end in _object_members(text, start):
        if key == "cells":
            cells_span = (value_start, value_end)
    spans: dict[int, tuple[int, int]] = {}
    if cells_span is None:
        return spans
    for number, (item_start, _) in enumerate(_array_items(text, cells_span[0]), start=1):
        if text[item_start:item_start + 1] != "{":
            continue
        for key, value_start, value_end in _object_members(text, item_start):
            if key == "source":
                spans[number] = (value_start, value_end)
    return spans


def _is_python(document: dict) -> bool:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key in ("language_info", "kernelspec"):
        info = metadata.get(key)
        if isinstance(info, dict):
            name = info.get("name" if key == "language_info" else "language")
            if isinstance(name, str) and name:
                return name.lower() == "python"
    return True


def read_notebook(text: str) -> NotebookFile:
    """The notebook whose JSON text is ``text``; raises :class:`NotebookError` (with the
    position of a JSON error) when it is not valid JSON or not an nbformat 4 notebook."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"cannot parse the notebook: invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise NotebookError("cannot parse the notebook: the JSON nests too deeply") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("not a Jupyter notebook: the JSON has no `cells` list")
    version = document.get("nbformat")
    if version is not None and version != 4:
        raise NotebookError(f"unsupported notebook format {version!r}: shapecheck reads nbformat 4")
    cells = []
    for number, cell in enumerate(document["cells"], start=1):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a Jupyter notebook: cell {number} is not an object")
        source = cell.get("source", "")
        as_list = isinstance(source, list)
        if as_list and all(isinstance(part, str) for part in source):
            joined = "".join(source)
        elif isinstance(source, str):
            joined = source
        else:
            raise NotebookError(f"not a Jupyter notebook: the source of cell {number} is not text")
        kind = cell.get("cell_type")
        cells.append(RawCell(number, kind if isinstance(kind, str) else "", joined, as_list))
    return NotebookFile(text, tuple(cells), _is_python(document))


def _as_lines(source: str) -> list[str]:
    """``source`` as nbformat stores it in a list: each line with its ``\\n``, the last without."""
    return source.splitlines(keepends=True)


def _list_layout(text: str, start: int, end: int, indent: str) -> tuple[str, str, str]:
    """(after ``[``, between items, before ``]``) of the list at ``text[start:end]``."""
    items = list(_array_items(text, start))
    if not items:
        if "\n" not in text:  # a file on one line
            return "", ",", ""
        return "\n" + indent, ",\n" + indent, "\n" + indent[: max(len(indent) - 1, 0)]
    opening = text[start + 1:items[0][0]]
    closing = text[items[-1][1]:end - 1]
    between = text[items[0][1]:items[1][0]] if len(items) > 1 else "," + opening
    return opening, between, closing


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file writes non-ASCII characters as ``\\u`` escapes (``ensure_ascii``)."""
    return not any(ord(char) > 127 for char in text) and re.search(r"\\u(?!00[0-7])[0-9a-fA-F]{4}", text) is not None


def _indent_at(text: str, index: int) -> str:
    line_start = text.rfind("\n", 0, index) + 1
    return _WS.match(text, line_start).group().replace("\n", "").replace("\r", "")  # type: ignore[union-attr]


def replace_sources(notebook: NotebookFile, sources: dict[int, str]) -> str:
    """The notebook's JSON text with the ``source`` of each cell numbered in ``sources``
    replaced by the new text; everything else in the text is kept byte for byte."""
    ascii_only = _escapes_non_ascii(notebook.text)
    by_number = {cell.number: cell for cell in notebook.cells}
    pieces: list[str] = []
    position = 0
    spans = notebook.source_spans()
    for number in sorted(sources):
        cell = by_number[number]
        span: Optional[tuple[int, int]] = spans.get(number)
        if span is None or cell.source == sources[number]:
            continue
        start, end = span
        new = sources[number]
        if cell.as_list:
            lines = _as_lines(new)
            opening, between, closing = _list_layout(notebook.text, start, end, _indent_at(notebook.text, start) + " ")
            body = between.join(json.dumps(line, ensure_ascii=ascii_only) for line in lines)
            value = "[" + (opening + body + closing if lines else "") + "]"
        else:
            value = json.dumps(new, ensure_ascii=ascii_only)
        pieces.append(notebook.text[position:start])
        pieces.append(value)
        position = end
    pieces.append(notebook.text[position:])
    return "".join(pieces)


__all__ = ["NotebookError", "NotebookFile", "RawCell", "read_notebook", "replace_sources"]
