"""Source text in messages."""

from __future__ import annotations

import libcst as cst


def short(ctx, node: cst.CSTNode, limit: int = 40) -> str:
    """The source of ``node`` on one line, cut to ``limit`` characters, for messages."""
    text = " ".join(ctx.source(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
