"""Re-parsing an edited document: only the top-level statements the edit touched.

A :class:`ParsedDocument` keeps a text, its libcst module and where each top-level statement
starts. :meth:`ParsedDocument.edited` finds the characters the new text changed (common prefix
and suffix), takes the statements they touch plus one neighbour on each side (an indented line
typed after a function belongs to it; a backslash joins the next statement), parses that stretch
alone with the module's own indentation and newline, and splices its statements into the cached
module in place of the old ones. The spliced module's code is the new text character for
character (the statements are the same nodes a full parse makes, up to which statement a
comment line between them belongs to). A stretch that does not parse, a text without a final
newline, or a change of the file's header makes a full parse.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Optional

import libcst as cst

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
        prefix = 0
        while prefix < limit and old[prefix] == new[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
            suffix += 1
        changed_end = len(old) - suffix  # the old text changed in [prefix, changed_end)
        first = bisect.bisect_right(self.starts, prefix) - 1
        last = bisect.bisect_left(self.ends, changed_end)
        first = max(first - 1, 0)
        last = min(last + 1, len(body) - 1)
        if self.starts[0] > 0 and prefix < self.starts[0]:
            return parse_document(new_text)  # the header (leading comments) changed
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
        statements = list(part.body)
        lengths = [len(part.code_for_node(s)) for s in statements]
        if part.header:
            if not statements:
                return parse_document(new_text)
            statements[0] = statements[0].with_changes(leading_lines=[*part.header, *statements[0].leading_lines])
            lengths[0] += sum(len(part.code_for_node(line)) for line in part.header)
        footer = self.module.footer
        rest = list(body[last + 1:])
        if to_footer:
            footer = part.footer
        elif part.footer:
            if not rest:
                return parse_document(new_text)
            rest[0] = rest[0].with_changes(leading_lines=[*part.footer, *rest[0].leading_lines])
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
        module = self.module.with_changes(body=new_body, footer=footer)
        return ParsedDocument(new_text, module, tuple(new_starts), tuple(new_ends), len(statements))


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
