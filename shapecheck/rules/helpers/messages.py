"""Source text in messages."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import libcst as cst


def short(ctx, node: cst.CSTNode, limit: int = 40) -> str:
    """The source of ``node`` on one line, cut to ``limit`` characters, for messages."""
    text = " ".join(ctx.source(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def report_unless(ctx, node: cst.CSTNode, message: str, condition: Optional[str],
                  related: Sequence[tuple[cst.CSTNode, str]] = ()) -> None:
    """Report ``message`` at ``node``; a finding that holds only for generic sizes ends with its
    exception, ``" (wrong unless <condition>)"``, and carries it as ``condition``; ``related``:
    the other nodes it comes from, with labels."""
    ctx.report(node, with_exception(message, condition), condition=condition, related=related)


def with_exception(message: str, condition: Optional[str]) -> str:
    """``message``, followed by ``" (wrong unless <condition>)"`` when there is an exception."""
    return message if condition is None else f"{message} (wrong unless {condition})"


def reduced_here(reduction: Any) -> list[tuple[cst.CSTNode, str]]:
    """The related place of a finding about a reduction without ``keepdim`` (a
    :class:`~shapecheck.semantic.facts.Reduction`): the reduction's call, when known."""
    node = reduction.node if reduction is not None else None
    return [(node, "reduced here without `keepdim=True`")] if node is not None else []
