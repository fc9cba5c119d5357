"""Source text in messages."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def short(ctx, node: cst.CSTNode, limit: int = 40) -> str:
    """The source of ``node`` on one line, cut to ``limit`` characters, for messages."""
    text = " ".join(ctx.source(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def report_unless(ctx, node: cst.CSTNode, message: str, condition: Optional[str]) -> None:
    """Report ``message`` at ``node``; a finding that holds only for generic sizes ends with its
    exception, ``" (wrong unless <condition>)"``, and carries it as ``condition``."""
    ctx.report(node, with_exception(message, condition), condition=condition)


def with_exception(message: str, condition: Optional[str]) -> str:
    """``message``, followed by ``" (wrong unless <condition>)"`` when there is an exception."""
    return message if condition is None else f"{message} (wrong unless {condition})"
