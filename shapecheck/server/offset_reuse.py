"""Character offsets of an edited document's nodes, from the last version's.

Diagnostics need the line and column of the nodes that carry findings, which
:func:`shapecheck.engine.positions.node_positions` finds by generating the whole module's code
again. After an incremental parse most of the module is the same node objects at the same
offsets, or shifted by the length the edit added: :func:`carry_offsets` generates the code of the
re-parsed top-level statements only and answers for every other node from the last version's
offsets. Only a version whose offsets were computed (one that had findings) lends them; a chain
of lent versions is cut after :data:`MAX_CHAIN` edits.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.engine.positions import OffsetTable, known_offsets, statement_offsets, use_offsets
from shapecheck.server.incremental_parse import ParsedDocument

__all__ = ["ShiftedOffsets", "carry_offsets"]

#: how many edits in a row may answer from an older version's offsets
MAX_CHAIN = 16


class ShiftedOffsets:
    """The offsets of a module that differs from the last version in a run of top-level
    statements: those are looked up in ``fresh``; a node before them keeps its old offsets, a
    node after them moves by ``delta``."""

    def __init__(self, module: cst.Module, fresh: OffsetTable, old: OffsetTable, old_start: int, old_end: int,
                 delta: int, length: int) -> None:
        self.module = module
        self.fresh = fresh
        self.old = old
        self.old_start = old_start
        self.old_end = old_end
        self.delta = delta
        self.length = length
        self.chain: int = (old.chain + 1) if isinstance(old, ShiftedOffsets) else 1

    def get(self, node: cst.CSTNode, /) -> Optional[tuple[int, int]]:
        """The offsets of ``node`` in this version's text (``None``: not in the module)."""
        if node is self.module:
            return (0, self.length)
        found = self.fresh.get(node)
        if found is not None:
            return found
        found = self.old.get(node)
        if found is None:
            return None
        start, end = found
        if end <= self.old_start:
            return found
        if start >= self.old_end:
            return (start + self.delta, end + self.delta)
        return None  # a node of the re-parsed statements that the new version no longer holds


def carry_offsets(previous: ParsedDocument, current: ParsedDocument) -> bool:
    """Let the next :func:`~shapecheck.engine.positions.node_positions` call for
    ``current.module`` answer from ``previous``'s offsets, when they were computed and
    ``current`` was made from ``previous`` by replacing a run of top-level statements; whether
    it did."""
    replaced = current.replaced
    old = known_offsets(previous.module)
    if replaced is None or old is None or current is previous:
        return False
    if isinstance(old, ShiftedOffsets) and old.chain >= MAX_CHAIN:
        return False
    first, old_end, new_end = replaced
    if old_end > len(previous.starts) or new_end > len(current.starts) or old_end <= first or new_end <= first:
        return False
    try:
        fresh = statement_offsets(current.module, current.module.body[first:new_end], current.starts[first])
    except Exception:  # libcst's private code generation changed: positions are computed anew
        return False
    delta = len(current.text) - len(previous.text)
    table = ShiftedOffsets(current.module, fresh, old, previous.starts[first], previous.ends[old_end - 1], delta,
                           len(current.text))
    use_offsets(current.module, table, current.text)
    return True
