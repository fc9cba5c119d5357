"""Values computed from one syntax node, carried from one version of an open document to the next.

The language server re-parses only what an edit touched and keeps the other statements as the
very same nodes (:mod:`shapecheck.server.incremental_parse`); a scan before the walk that reads
each top-level statement on its own (the function scopes of
:mod:`~shapecheck.semantic.module_state`, the constructions of
:mod:`~shapecheck.semantic.config_sizes`) can then take what it found in an unchanged one from the
last version. A :class:`VersionMemo` holds those values for one document: the server's analysis
runs inside :func:`carrying`, and :func:`carried`/:func:`carry` read and store values while it
runs. Outside it (the CLI, a full lint) nothing is kept and every value is computed.

Only values that depend on nothing but their node (syntax trees never change) may be kept. An
entry is returned for its very node only, and a version keeps just the entries the last one used,
so what the document no longer holds is dropped.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Hashable, Iterator, Optional

__all__ = ["VersionMemo", "carried", "carry", "carrying"]


class VersionMemo:
    """Per-node values of one document, by table: those of the last version and of this one."""

    def __init__(self) -> None:
        #: (table, id of the node) -> (the node, its value): found in the last version
        self._last: dict[tuple[Hashable, int], tuple[object, Any]] = {}
        #: the same, used or computed by this version
        self._now: dict[tuple[Hashable, int], tuple[object, Any]] = {}

    def get(self, table: Hashable, node: object) -> Any:
        """The value of ``node`` in ``table``, or ``None``."""
        key = (table, id(node))
        hit = self._now.get(key)
        if hit is None:
            hit = self._last.get(key)
            if hit is None or hit[0] is not node:
                return None
            self._now[key] = hit
        return hit[1] if hit[0] is node else None

    def put(self, table: Hashable, node: object, value: Any) -> Any:
        """Keep ``value`` for ``node`` in ``table``; returns it."""
        self._now[(table, id(node))] = (node, value)
        return value

    def next_version(self) -> None:
        """Start the next version: it can find what this one used."""
        self._last, self._now = self._now, {}

    def __len__(self) -> int:
        return len(self._now)


_current: Optional[VersionMemo] = None


@contextmanager
def carrying(memo: VersionMemo) -> Iterator[VersionMemo]:
    """Let the scans run inside keep their per-node values in ``memo`` (one version's analysis)."""
    global _current
    outer, _current = _current, memo
    try:
        yield memo
    finally:
        _current = outer
        memo.next_version()


def carried(table: Hashable, node: object) -> Any:
    """The value kept for ``node`` in ``table`` by this version or the last one, else ``None``
    (always ``None`` outside :func:`carrying`)."""
    memo = _current
    return memo.get(table, node) if memo is not None else None


def carry(table: Hashable, node: object, value: Any) -> Any:
    """Keep ``value`` for ``node`` in ``table`` (inside :func:`carrying`); returns it."""
    memo = _current
    if memo is not None:
        memo.put(table, node, value)
    return value
