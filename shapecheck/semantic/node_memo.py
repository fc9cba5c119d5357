"""Values computed once per syntax node of the file being linted.

A cache keyed by ``id(node)`` alone would be wrong once a tree is freed and a new node reuses the
id, so every entry keeps its node and is returned only for that very node. A cache that reaches its
limit starts again from empty (the trees of a run are linted one after another), and
:func:`forget_node_memos` empties them all once a file is done, so that no memo keeps an earlier
file's nodes alive.
"""

from __future__ import annotations

import weakref
from typing import Generic, Hashable, Optional, TypeVar

V = TypeVar("V")

#: every memo made so far
_MEMOS: "weakref.WeakSet[NodeMemo]" = weakref.WeakSet()


class NodeMemo(Generic[V]):
    """Values keyed by a node (and optional hashable extras), kept for that node only."""

    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        #: keyed by ``id(node)`` alone, or by ``(id(node), *extra)``
        self._items: dict[Hashable, tuple[object, V]] = {}
        _MEMOS.add(self)

    def get(self, node: object, *extra: Hashable) -> Optional[V]:
        """The value stored for ``node`` (and ``extra``), or ``None``."""
        hit = self._items.get((id(node),) + extra if extra else id(node))
        return hit[1] if hit is not None and hit[0] is node else None

    def put(self, node: object, value: V, *extra: Hashable) -> V:
        """Store ``value`` for ``node`` (and ``extra``) and return it."""
        if len(self._items) > self._limit:
            self._items.clear()
        self._items[(id(node),) + extra if extra else id(node)] = (node, value)
        return value

    def clear(self) -> None:
        """Forget every value (and the nodes they keep alive)."""
        self._items.clear()


def forget_node_memos() -> None:
    """Empty every :class:`NodeMemo`: the engine calls this when it releases a file."""
    for memo in list(_MEMOS):
        memo.clear()
