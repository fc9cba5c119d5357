"""Applying rule fixes to a libcst module.

A :class:`shapecheck.rules.base.Fix` names a node of the parsed module (by identity) and its
replacement. One pass applies every fix whose node does not overlap another fix's node (the
first one wins); the engine re-lints the result and repeats until nothing fixable is left, so
overlapping fixes land in later passes and no fix is ever applied twice.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from shapecheck.rules.base import Fix


class _Replacer(cst.CSTTransformer):
    """Replace nodes by identity; skip a fix nested inside (or around) one already chosen."""

    def __init__(self, fixes: Iterable[Fix]) -> None:
        super().__init__()
        self.pending: dict[int, Fix] = {}
        for fix in fixes:
            self.pending.setdefault(id(fix.node), fix)
        self.applied = 0
        self._inside = 0  # depth of nodes being replaced that enclose the current one
        self._chosen: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.pending:
            if self._inside:
                del self.pending[id(node)]  # overlaps an outer fix: left for the next pass
            else:
                self._chosen.add(id(node))
                self._inside += 1
        return True

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        key = id(original_node)
        if key in self._chosen:
            self._chosen.discard(key)
            self._inside -= 1
            fix = self.pending.pop(key)
            self.applied += 1
            return fix.replacement
        return updated_node


def apply_fixes(module: cst.Module, fixes: list[Fix]) -> tuple[cst.Module, int]:
    """The module with non-overlapping ``fixes`` applied, and how many were applied."""
    if not fixes:
        return module, 0
    replacer = _Replacer(fixes)
    new_module = module.visit(replacer)
    return new_module, replacer.applied
