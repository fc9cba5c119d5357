"""Line and column of libcst nodes, computed only for files that have findings.

libcst's ``PositionProvider`` regenerates the module's code and, for every node, splits each
token on newlines and builds position objects. Here the same code generation only keeps a running
character offset per node (the same syntactic start/end rules, through the same hooks), and the
few nodes that carry a finding are turned into line/column with a table of line starts: the same
numbers, measured ~6x cheaper on transformers model files. Should libcst's private code generation
hooks ever change, :func:`node_positions` falls back to ``PositionProvider``.
"""

from __future__ import annotations

import bisect
import re
from contextlib import contextmanager
from typing import Iterable, Iterator, Optional, Protocol

import libcst as cst

from shapecheck.engine.diagnostics import Related

_NEWLINE = re.compile(r"\r\n?|\n")

#: (line, column, end line, end column): 1-based lines, 0-based columns, like libcst's CodeRange
Span = tuple[int, int, int, int]


class OffsetTable(Protocol):
    """Node -> ``(start, end)`` character offsets in the module's code: a dict, or anything that
    answers ``get`` as one does."""

    def get(self, node: cst.CSTNode, /) -> Optional[tuple[int, int]]:
        """The offsets of ``node``, ``None`` when it is not in the module."""


def _offset_state_class():
    from libcst._nodes.internal import CodegenState

    class _OffsetState(CodegenState):
        """A code generation state that records ``(start, end)`` character offsets per node."""

        def __init__(self, module: cst.Module) -> None:
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.offset = 0
            self.spans: dict[cst.CSTNode, tuple[int, int]] = {}
            self.starts: list[int] = []

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)
            for token in self.indent_tokens:
                self.offset += len(token)

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            self.offset += len(value)

        def pop_trailing_newline(self) -> None:
            if self.tokens:
                self.offset -= len(self.tokens.pop())

        def before_codegen(self, node: cst.CSTNode) -> None:
            self.starts.append(self.offset)

        def after_codegen(self, node: cst.CSTNode) -> None:
            start = self.starts.pop()
            if node not in self.spans:  # a syntactic position recorded inside wins
                self.spans[node] = (start, self.offset)

        @contextmanager
        def record_syntactic_position(
            self,
            node: cst.CSTNode,
            *,
            start_node: Optional[cst.CSTNode] = None,
            end_node: Optional[cst.CSTNode] = None,
        ) -> Iterator[None]:
            start = self.offset
            try:
                yield
            finally:
                end = self.offset
                if start_node is not None:
                    start = self.spans[start_node][0]
                if end_node is not None:
                    end = self.spans[end_node][1]
                self.spans[node] = (start, end)

    return _OffsetState


_STATE = None
#: the module whose spans were computed last, its spans and line starts: the engine asks twice
#: for one file (the findings of call-site contexts, then every finding)
_LAST: Optional[tuple[cst.Module, OffsetTable, list[int]]] = None


def _offset_state(module: cst.Module):
    """A fresh code generation state for ``module`` that records each node's offsets."""
    global _STATE
    if _STATE is None:
        _STATE = _offset_state_class()
    return _STATE(module)


def _line_starts(code: str) -> list[int]:
    """The offset where each line of ``code`` starts."""
    return [0] + [m.end() for m in _NEWLINE.finditer(code)]


def _fast(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, Span]:
    global _LAST
    if _LAST is not None and _LAST[0] is module:
        spans, line_starts = _LAST[1], _LAST[2]
    else:
        state = _offset_state(module)
        module._codegen(state)
        line_starts = _line_starts("".join(state.tokens))
        spans = state.spans
        _LAST = (module, spans, line_starts)

    def line_col(offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(line_starts, offset) - 1
        return index + 1, offset - line_starts[index]

    found: dict[cst.CSTNode, Span] = {}
    for node in nodes:
        span = spans.get(node)
        if span is not None:
            found[node] = (*line_col(span[0]), *line_col(span[1]))
    return found


def _provider(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, Span]:
    from libcst.metadata import MetadataWrapper, PositionProvider

    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found: dict[cst.CSTNode, Span] = {}
    for node in nodes:
        rng = ranges.get(node)
        if rng is not None:
            found[node] = (rng.start.line, rng.start.column, rng.end.line, rng.end.column)
    return found


def known_offsets(module: cst.Module) -> Optional[OffsetTable]:
    """The ``(start, end)`` character offsets of ``module``'s nodes, when the last
    :func:`node_positions` call computed them for this module (else ``None``)."""
    return _LAST[1] if _LAST is not None and _LAST[0] is module else None


def statement_offsets(module: cst.Module, statements: Iterable[cst.CSTNode], offset: int) -> OffsetTable:
    """The character offsets of the nodes of top-level ``statements`` of ``module``, written
    one after another from character ``offset``, with the same code generation as
    :func:`node_positions`; raises when libcst's private code generation changed."""
    state = _offset_state(module)
    state.offset = offset
    for statement in statements:
        statement._codegen(state)
    return state.spans


def use_offsets(module: cst.Module, offsets: OffsetTable, code: str) -> None:
    """Let :func:`node_positions` answer for ``module`` (whose code is ``code``) from
    ``offsets`` instead of generating its code again: an editor that re-parsed part of a file
    knows the offsets of the rest from the last version."""
    global _LAST
    _LAST = (module, offsets, _line_starts(code))


def node_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, Span]:
    """The span of each of ``nodes`` (found by identity) in ``module``, as libcst's
    ``PositionProvider`` defines it; nodes that are not in the module are left out."""
    wanted = list(nodes)
    try:
        return _fast(module, wanted)
    except Exception:  # libcst's private code generation changed: use the public provider
        return _provider(module, wanted)


def related_places(related: Iterable[tuple[cst.CSTNode, str]], positions: dict[cst.CSTNode, Span],
                   line: int) -> tuple[Related, ...]:
    """The :class:`~shapecheck.engine.diagnostics.Related` places of a finding on ``line``: each
    node of ``related`` that ``positions`` (from :func:`node_positions`) holds, with its label,
    1-based; a node on the finding's own line, or a place already listed, is left out."""
    places: list[Related] = []
    for node, label in related:
        span = positions.get(node)
        if span is None or span[0] == line:
            continue
        place = Related(span[0], span[1] + 1, span[2], span[3] + 1, label)
        if all((p.line, p.column) != (place.line, place.column) for p in places):
            places.append(place)
    return tuple(places)
