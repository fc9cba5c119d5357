"""Re-parsing an edited document: only the statements the edit touched.

A :class:`ParsedDocument` keeps a text, its libcst module and where each top-level statement
starts. :meth:`ParsedDocument.edited` finds the characters the new text changed (common prefix
and suffix). An edit inside the body of a ``def`` or ``class`` (a method's, a nested
function's) re-parses only the statements it touched in the innermost such body, with a
neighbour on each side (:mod:`shapecheck.server.function_splice`). Otherwise, or when that is
not certain to equal a full parse, it takes the top-level statements the change touches plus one
neighbour on each side (an indented line typed after a function belongs to it; a backslash joins
the next statement), parses that stretch alone, and splices its statements into the cached
module in place of the old ones (a stretch whose detected indentation or newline differs from
the module's makes a full parse: libcst stores both relative to the module's defaults). The
spliced module's code is the new text character for character and its tree equals a full
parse's (tested with random edits of real files); every node outside the re-parsed statements
is the same object as before. A stretch that does not parse, a text without a final newline, or
a change of the file's header makes a full parse.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from shapecheck.server.function_splice import LineCounts, splice_nested

__all__ = ["ParsedDocument", "parse_document"]


@dataclass(frozen=True)
class ParsedDocument:
    """A text, its module, and the text offset where each top-level statement starts (the
    statement's leading comment and blank lines included); ``ends[-1]`` is where the footer starts."""

    text: str
    module: cst.Module
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    #: how many statements the last parse made afresh (the whole body after a full parse)
    reparsed: int = 0
    #: how many ``def``/``class`` bodies down those statements lie (0: top-level statements)
    depth: int = 0
    #: ``(first, old_end, new_end)``: top-level statements ``first:old_end`` of the last version
    #: became ``first:new_end`` and nothing else changed but offsets (``None``: a full parse, or
    #: the module's header or footer changed too)
    replaced: Optional[tuple[int, int, int]] = None
    #: the line count of each statement counted so far, shared by the versions of a document
    line_counts: LineCounts = field(default_factory=dict, compare=False, repr=False)

    def edited(self, new_text: str) -> "ParsedDocument":
        """The document after its text became ``new_text``; raises libcst's ``ParserSyntaxError``
        (or another parser error) when ``new_text`` does not parse."""
        if new_text == self.text:
            return self
        body = self.module.body
        if not body or not new_text.endswith(("\n", "\r")) or not self.text.endswith(("\n", "\r")):
            return parse_document(new_text)
        old, new = self.text, new_text
        limit = min(len(old), len(new))
        prefix = _common_length(old, new, limit, from_end=False)
        suffix = _common_length(old, new, limit - prefix, from_end=True)
        changed_end = len(old) - suffix  # the old text changed in [prefix, changed_end)
        first = bisect.bisect_right(self.starts, prefix) - 1
        last = bisect.bisect_left(self.ends, changed_end)
        first = max(first - 1, 0)
        last = min(last + 1, len(body) - 1)
        if self.starts[0] > 0 and prefix < self.starts[0]:
            return parse_document(new_text)  # the header (leading comments) changed
        nested = self._nested(new_text, prefix, changed_end)
        if nested is not None:
            return nested
        start = self.starts[first]
        to_footer = last == len(body) - 1
        old_end = len(old) if to_footer else self.ends[last]
        delta = len(new) - len(old)
        new_end = old_end + delta
        if new_end < start or old_end < changed_end:
            return parse_document(new_text)
        chunk = new[start:new_end]
        config = cst.PartialParserConfig(
            default_indent=self.module.default_indent, default_newline=self.module.default_newline,
        )
        part = cst.parse_module(chunk, config)
        compound = any(isinstance(statement, cst.BaseCompoundStatement) for statement in part.body)
        if part.default_newline != self.module.default_newline or (
                compound and part.default_indent != self.module.default_indent):
            return parse_document(new_text)  # its nodes' newlines and indentation are relative to these
        statements = list(part.body)
        lengths = [len(part.code_for_node(s)) for s in statements]
        header = self.module.header
        if part.header:
            if not statements:
                return parse_document(new_text)
            header_length = sum(len(part.code_for_node(line)) for line in part.header)
            if first == 0:  # libcst gives the first statement's leading lines to the module's header
                header = [*header, *part.header]
                start += header_length
            else:
                statements[0] = statements[0].with_changes(leading_lines=[*part.header, *statements[0].leading_lines])
                lengths[0] += header_length
        footer = self.module.footer
        rest = list(body[last + 1:])
        replaced: Optional[tuple[int, int, int]] = (first, last + 1, first + len(statements))
        if to_footer:
            footer = part.footer
            replaced = None
        elif part.footer:
            if not rest:
                return parse_document(new_text)
            rest[0] = rest[0].with_changes(leading_lines=[*part.footer, *rest[0].leading_lines])
            replaced = (first, last + 2, first + len(statements) + 1)
        if header is not self.module.header:
            replaced = None
        new_body = [*body[:first], *statements, *rest]
        if not new_body:
            return parse_document(new_text)
        offsets = []
        at = start
        for length in lengths:
            offsets.append(at)
            at += length
        if part.footer and not to_footer:
            chunk_stmt_end = at
            new_starts = [*self.starts[:first], *offsets, chunk_stmt_end,
                          *(s + delta for s in self.starts[last + 2:])]
        else:
            new_starts = [*self.starts[:first], *offsets, *(s + delta for s in self.starts[last + 1:])]
        new_ends = new_starts[1:] + [(at if to_footer else self.ends[-1] + delta)]
        if len(new_starts) != len(new_body):
            return parse_document(new_text)
        module = self.module.with_changes(header=header, body=new_body, footer=footer)
        return ParsedDocument(new_text, module, tuple(new_starts), tuple(new_ends), len(statements),
                              replaced=replaced, line_counts=self.line_counts)

    def _nested(self, new_text: str, prefix: int, changed_end: int) -> Optional["ParsedDocument"]:
        """The document after an edit inside one top-level ``def`` or ``class`` body, re-parsing
        only the statements it touched in the innermost body (:mod:`.function_splice`)."""
        top = bisect.bisect_right(self.starts, prefix) - 1
        if top < 0 or changed_end > self.ends[top]:
            return None
        spliced = splice_nested(self.module, self.text, new_text, top, self.starts[top], self.ends[top],
                                prefix, changed_end, self.line_counts)
        if spliced is None:
            return None
        delta = len(new_text) - len(self.text)
        starts = (*self.starts[:top + 1], *(s + delta for s in self.starts[top + 1:]))
        ends = (*self.ends[:top], *(e + delta for e in self.ends[top:]))
        return ParsedDocument(new_text, spliced.module, starts, ends, spliced.reparsed, spliced.depth,
                              (top, top + 1, top + 1), self.line_counts)


def _common_length(old: str, new: str, limit: int, from_end: bool) -> int:
    """How many characters, at most ``limit``, ``old`` and ``new`` share at their start (at their
    end with ``from_end``): a binary search comparing slices, not a loop over characters."""
    low, high = 0, limit  # they share ``low`` characters, not ``high + 1``
    while low < high:
        middle = (low + high + 1) // 2
        same = old[len(old) - middle:] == new[len(new) - middle:] if from_end else old[:middle] == new[:middle]
        if same:
            low = middle
        else:
            high = middle - 1
    return low


def parse_document(text: str, module: Optional[cst.Module] = None) -> ParsedDocument:
    """A full parse of ``text`` (or ``module``, already parsed from it); raises the parser's
    error when ``text`` does not parse."""
    if module is None:
        from shapecheck.engine.parsing import parse_source

        module = parse_source(text)
    starts, ends = [], []
    at = sum(len(module.code_for_node(line)) for line in module.header)
    for statement in module.body:
        starts.append(at)
        at += len(module.code_for_node(statement))
        ends.append(at)
    return ParsedDocument(text, module, tuple(starts), tuple(ends), len(module.body))
