"""A value of the node being visited, computed once for all the rules whose hooks ask for it.

A walk visits each node once, with its own rule context (a call-site walk has another), so the
pair (context, node) names one visit: while the hooks of one node run, the facts they read do not
change, and a value computed from them by the first rule serves the next ones.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Optional, TypeVar

V = TypeVar("V")

#: every memo made, so that :func:`forget_visits` can empty them all
_MEMOS: list["LastVisit"] = []


def forget_visits() -> None:
    """Drop the last value of every memo, and with it the context (and so the file's analysis)
    that it keeps alive."""
    for memo in _MEMOS:
        memo._ctx = memo._node = memo._value = None


class LastVisit(Generic[V]):
    """The value computed for the last (context, node) asked; both are kept, so that a freed pair
    cannot pass its value to a later one at the same addresses."""

    __slots__ = ("_ctx", "_node", "_value")

    def __init__(self) -> None:
        self._ctx: Any = None
        self._node: Any = None
        self._value: Optional[V] = None
        _MEMOS.append(self)

    def get(self, ctx: Any, node: Any, compute: Callable[[Any, Any], V]) -> V:
        """The value of ``node`` in the visit ``ctx`` is running, computed by ``compute(ctx, node)``
        the first time it is asked."""
        if self._node is node and self._ctx is ctx:
            return self._value  # type: ignore[return-value]
        value = compute(ctx, node)
        self._ctx, self._node, self._value = ctx, node, value
        return value
