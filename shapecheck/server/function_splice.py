"""Re-parsing an edit inside a function or class body: only the statements of that body it touched.

:func:`splice_nested` walks down from the top-level statement an edit lies in, through the
indented bodies of ``def`` and ``class`` statements, to the innermost body whose statements hold
the whole edit. It takes the touched statements of that body plus one neighbour on each side,
parses them inside synthetic ``class``/``def`` headers that reproduce the nesting and the
indentation of every enclosing body, and puts the new statements in place of the old ones. An
edit within the header of a ``def`` or ``class`` (its decorators, signature, bases) re-parses
that header over a ``pass`` body and puts the old body back under it. Every other node of the
module stays the same object. It gives up (``None``, the caller parses more) whenever the result
could differ from a full parse:

- the stretch does not parse, or does not parse as statements of the same body (a dedent that
  leaves the body, an indentation change of the body's first line);
- a comment or blank line at the end of the stretch would belong to a statement after it;
- a comment line after the stretch is indented deeply enough to belong to a block that the
  stretch closes (libcst gives a block the trailing lines up to the last one that starts with
  the block's indentation), so a full parse could attach it elsewhere;
- the edit touches a header's leading comment lines (they could move to the statement before);
- the text has ``\\r`` line endings or form feeds, where counting lines is not exact.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import libcst as cst

__all__ = ["NestedSplice", "splice_nested"]

Owner = Union[cst.FunctionDef, cst.ClassDef]
#: lines counted in the statements of one document: ``(id(node), whole) -> (node, lines)``, the
#: whole statement's lines or (``whole`` false) those of a ``def``/``class`` before its body
LineCounts = dict[tuple[int, bool], tuple[cst.CSTNode, int]]
_MAX_COUNTED = 20_000
_NEWLINE = re.compile("\n")


@dataclass(frozen=True)
class NestedSplice:
    """The module after an edit spliced into a nested body."""

    module: cst.Module
    #: the index of the top-level statement that changed
    top: int
    #: how many statements of the body were parsed afresh
    reparsed: int
    #: how many ``def``/``class`` bodies down the re-parsed statements lie (1: a top-level one's)
    depth: int


@dataclass(frozen=True)
class _Level:
    owner: Owner
    block: cst.IndentedBlock
    #: the block's indentation relative to the enclosing one, and the absolute one
    relative: str
    absolute: str
    #: where each statement of the block starts in the old text, then where the last one ends
    bounds: list[int]
    #: where the block's footer (trailing comment lines) ends
    footer_end: int
    #: where the owner's first line after its leading comment and blank lines starts
    header_start: int
    #: the index of ``owner`` in the enclosing body (the module's for the first level)
    index: int


def _lines(module: cst.Module, node: cst.CSTNode, counts: LineCounts) -> int:
    entry = counts.get((id(node), True))
    if entry is not None and entry[0] is node:
        return entry[1]
    lines = module.code_for_node(node).count("\n")
    if len(counts) > _MAX_COUNTED:
        counts.clear()
    counts[(id(node), True)] = (node, lines)
    return lines


def _header_lines(module: cst.Module, owner: Owner, block: cst.IndentedBlock, counts: LineCounts) -> int:
    """The lines of ``owner`` before its body's first statement: leading comments, decorators and
    the header up to its colon's line end, counted on a copy whose body is one ``pass``."""
    entry = counts.get((id(owner), False))
    if entry is not None and entry[0] is owner:
        return entry[1]
    stub = owner.with_changes(body=block.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])], footer=[]))
    lines = module.code_for_node(stub).count("\n") - 1
    counts[(id(owner), False)] = (owner, lines)
    return lines


def _level(module: cst.Module, owner: Owner, start: int, line_starts: list[int], first_line: int,
           outer: str, index: int, counts: LineCounts) -> Optional[_Level]:
    """The body of ``owner``, whose code starts at offset ``start`` on line ``first_line``
    (0-based index into ``line_starts``), enclosed in a body indented by ``outer``."""
    block = owner.body
    if not isinstance(block, cst.IndentedBlock):
        return None
    statement_lines = [_lines(module, statement, counts) for statement in block.body]
    header = _header_lines(module, owner, block, counts)
    line = first_line + header
    bounds = []
    for count in statement_lines:
        bounds.append(line)
        line += count
    bounds.append(line)
    end_line = line + len(block.footer)
    if end_line >= len(line_starts):
        return None
    relative = block.indent if block.indent is not None else module.default_indent
    return _Level(owner=owner, block=block, relative=relative, absolute=outer + relative,
                  bounds=[line_starts[b] for b in bounds], footer_end=line_starts[end_line],
                  header_start=line_starts[first_line + len(owner.leading_lines)], index=index)


def _after_lines_safe(text: str, at: int, indent: str, block_ends: bool) -> bool:
    """Whether the comment and blank lines from ``at`` up to the next code line stay where they
    are in a full parse: none starts with a deeper indentation than ``indent`` (nor with
    ``indent`` itself when the block ends at ``at``)."""
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end + 1
        line = text[at:end]
        stripped = line.lstrip(" \t")
        if stripped and not stripped.startswith(("#", "\n", "\r\n")):
            return True
        if line.startswith(indent) and (block_ends or line[len(indent):len(indent) + 1] in (" ", "\t")):
            return False
        at = end
    return True


def _chain(module: cst.Module, text: str, start: int, end: int, top: int, prefix: int,
           changed_end: int, counts: LineCounts) -> tuple[list[_Level], Optional[_Level]]:
    """The bodies, outermost first, whose statement region holds the whole change; and the
    ``def``/``class`` (of the innermost one, or at the top) whose header (decorators, signature,
    bases) holds it, if one does."""
    chain: list[_Level] = []
    node: cst.CSTNode = module.body[top]
    at, index, outer = start, top, ""
    line_starts = [start] + [found.end() for found in _NEWLINE.finditer(text, start, end)]
    while isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        first_line = bisect.bisect_left(line_starts, at)
        if first_line >= len(line_starts) or line_starts[first_line] != at:
            break
        level = _level(module, node, at, line_starts, first_line, outer, index, counts)
        if level is not None and level.header_start <= prefix and changed_end <= level.bounds[0]:
            return chain, level
        if level is None or not (level.bounds[0] <= prefix and changed_end <= level.footer_end):
            break
        chain.append(level)
        bounds = level.bounds
        inner = bisect.bisect_right(bounds, prefix) - 1
        if inner >= len(level.block.body) or changed_end > bounds[inner + 1]:
            break
        node, at, index, outer = level.block.body[inner], bounds[inner], inner, level.absolute
    return chain, None


def _wrapper(module: cst.Module, chain: Sequence[_Level]) -> str:
    newline = module.default_newline
    lines = ["if 1:", module.default_indent + "pass"]
    indent = ""
    for level in chain:
        if isinstance(level.owner, cst.ClassDef):
            opener = "class _W:"
        else:
            opener = "async def _W():" if level.owner.asynchronous is not None else "def _W():"
        lines.append(indent + opener)
        indent = level.absolute
    return newline.join(lines) + newline


def _innermost(module: cst.Module, chain: Sequence[_Level], chunk: str) -> Optional[cst.IndentedBlock]:
    """The innermost synthetic body in the parse of ``chunk``; ``None`` when the chunk does not
    make exactly the synthetic nesting (one statement in each outer body, none of their
    footers, the indentation of every enclosing body)."""
    part = cst.parse_module(chunk)
    if (part.header or part.footer or len(part.body) != 2 or part.default_indent != module.default_indent
            or part.default_newline != module.default_newline):
        return None
    node: cst.CSTNode = part.body[1]
    for depth, level in enumerate(chain):
        if not isinstance(node, type(level.owner)) or node.leading_lines or node.decorators:
            return None
        block = node.body
        if not isinstance(block, cst.IndentedBlock):
            return None
        relative = block.indent if block.indent is not None else part.default_indent
        if relative != level.relative:
            return None
        if depth == len(chain) - 1:
            return block
        if block.footer or len(block.body) != 1:
            return None
        node = block.body[0]
    return None


def _parsed_header(module: cst.Module, chain: Sequence[_Level], level: _Level, chunk: str) -> Optional[Owner]:
    """The ``def``/``class`` of ``level`` re-parsed from ``chunk`` (its new header over a ``pass``
    body, inside the synthetic nesting) with its old body and leading lines put back."""
    if chain:
        block = _innermost(module, chain, chunk)
        if block is None or block.footer or len(block.body) != 1:
            return None
        node: cst.CSTNode = block.body[0]
    else:
        part = cst.parse_module(chunk)
        if (part.header or part.footer or len(part.body) != 2 or part.default_indent != module.default_indent
                or part.default_newline != module.default_newline):
            return None
        node = part.body[1]
    if not isinstance(node, type(level.owner)) or node.leading_lines:
        return None
    stub = node.body
    if not isinstance(stub, cst.IndentedBlock) or stub.footer or len(stub.body) != 1:
        return None
    relative = stub.indent if stub.indent is not None else module.default_indent
    line = stub.body[0]
    if (relative != level.relative or not isinstance(line, cst.SimpleStatementLine) or line.leading_lines
            or len(line.body) != 1 or not isinstance(line.body[0], cst.Pass)):
        return None
    return node.with_changes(leading_lines=level.owner.leading_lines,
                             body=level.block.with_changes(header=stub.header))


def splice_nested(module: cst.Module, old: str, new: str, top: int, start: int, end: int,
                  prefix: int, changed_end: int, counts: LineCounts) -> Optional[NestedSplice]:
    """``module`` (parsed from ``old``) after ``old`` became ``new``, when the change, which
    replaced ``old[prefix:changed_end]``, lies inside the body of a ``def`` or ``class`` within
    top-level statement ``top`` (``old[start:end]``); ``None`` when a wider parse is needed.
    ``counts`` caches the line count of statements across edits. Raises the parser's error when
    the re-parsed statements do not parse."""
    if "\r" in old or "\x0c" in old or "\r" in new or "\x0c" in new:
        return None
    chain, header = _chain(module, old, start, end, top, prefix, changed_end, counts)
    delta = len(new) - len(old)
    if header is not None:
        return _splice_header(module, new, top, chain, header, delta, counts)
    if not chain:
        return None
    level = chain[-1]
    bounds, statements = level.bounds, level.block.body
    first = bisect.bisect_right(bounds, prefix) - 1
    last = bisect.bisect_left(bounds, changed_end) - 1
    first = max(min(first, len(statements) - 1) - 1, 0)
    last = min(max(last, first) + 1, len(statements) - 1)
    to_end = last == len(statements) - 1
    region_start = bounds[first]
    region_end = level.footer_end if to_end else bounds[last + 1]
    if not (region_start <= prefix and changed_end <= region_end):
        return None
    new_end = region_end + delta
    if (new_end <= region_start or new[new_end - 1] != "\n"
            or not _after_lines_safe(new, new_end, level.absolute, to_end)):
        return None
    chunk = _wrapper(module, chain) + new[region_start:new_end]
    try:
        block = _innermost(module, chain, chunk)
    except Exception:
        # the text may still parse as a whole (a dedent out of the body): let a wider parse say
        return None
    if block is None or (block.footer and not to_end):
        return None
    replaced = level.owner.with_changes(body=level.block.with_changes(
        body=[*statements[:first], *block.body, *statements[last + 1:]],
        footer=block.footer if to_end else level.block.footer,
    ))
    _forget(counts, [*statements[first:last + 1], *(outer.owner for outer in chain)])
    return NestedSplice(_rebuilt(module, top, chain, replaced), top, len(block.body), len(chain))


def _splice_header(module: cst.Module, new: str, top: int, chain: list[_Level], level: _Level, delta: int,
                   counts: LineCounts) -> Optional[NestedSplice]:
    """The module after an edit within the header of ``level``'s ``def``/``class``: that
    header re-parsed over a ``pass`` body, the old body put back under it."""
    header_end = level.bounds[0] + delta
    if header_end <= level.header_start or new[header_end - 1] != "\n":
        return None
    chunk = (_wrapper(module, chain) + new[level.header_start:header_end] + level.absolute + "pass"
             + module.default_newline)
    try:
        owner = _parsed_header(module, chain, level, chunk)
    except Exception:
        return None
    if owner is None:
        return None
    replaced: cst.BaseStatement = owner
    if chain:
        body: list[cst.BaseStatement] = list(chain[-1].block.body)
        body[level.index] = owner
        replaced = chain[-1].owner.with_changes(body=chain[-1].block.with_changes(body=body))
    _forget(counts, [level.owner, *(outer.owner for outer in chain)])
    return NestedSplice(_rebuilt(module, top, chain, replaced), top, 1, len(chain))


def _rebuilt(module: cst.Module, top: int, chain: Sequence[_Level], replaced: cst.BaseStatement) -> cst.Module:
    """``module`` with ``replaced`` in place of the owner of the innermost body of ``chain`` (of
    the top-level statement ``top`` when ``chain`` is empty), every enclosing node rebuilt."""
    for outer, inner in zip(reversed(chain[:-1]), reversed(chain[1:])):
        body: list[cst.BaseStatement] = list(outer.block.body)
        body[inner.index] = replaced
        replaced = outer.owner.with_changes(body=outer.block.with_changes(body=body))
    top_body: list[cst.BaseStatement] = list(module.body)
    top_body[top] = replaced
    return module.with_changes(body=top_body)


def _forget(counts: LineCounts, nodes: Sequence[cst.CSTNode]) -> None:
    """Drop the line counts of nodes a splice replaced."""
    for node in nodes:
        counts.pop((id(node), True), None)
        counts.pop((id(node), False), None)
