"""Parsing a file for the analysis: libcst's parser, without its second check of every node.

libcst builds the tree of ``parse_module`` through the public node constructors, and each
constructor validates its node (``CSTNode.__post_init__`` calls ``_validate``): a check of what
the grammar has just guaranteed, about a sixth of the parse on transformers model files (libcst's
own comment there says validation could be skipped when parsing). :func:`parse_source` turns that
hook off for the duration of one parse, under a lock; the nodes that fixes build later are
validated as usual. Should libcst's node base ever change, it parses the plain way.
"""

from __future__ import annotations

import threading

import libcst as cst

__all__ = ["parse_source"]

_LOCK = threading.Lock()


def _skip_validation(self: cst.CSTNode) -> None:
    """The constructor hook while the parser builds the tree: no validation."""


def parse_source(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, the same tree and the same errors, built without
    re-validating each node the parser made."""
    base = cst.CSTNode
    hook = base.__dict__.get("__post_init__")
    if hook is None:  # libcst changed the hook: parse the plain way
        return cst.parse_module(text)
    with _LOCK:
        base.__post_init__ = _skip_validation  # type: ignore[method-assign]
        try:
            return cst.parse_module(text)
        finally:
            base.__post_init__ = hook  # type: ignore[method-assign]
