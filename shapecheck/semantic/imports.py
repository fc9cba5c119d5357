"""The import table of a file: which local names stand for which modules and objects."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import libcst as cst

from shapecheck.semantic.syntax import dotted_name


class ImportTable:
    """Local names bound by imports, mapped to what they stand for (``T`` -> ``torch``)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        #: id of a node -> (the node, its qualified name): the node is kept, so that a node made
        #: for one query (``cst.Name(name)``) and freed cannot pass its answer to a later node
        #: allocated at the same address
        self._cache: dict[int, tuple[cst.CSTNode, Optional[str]]] = {}

    def add_import(self, node: cst.Import) -> None:
        """Record ``import a.b`` (binds ``a``) and ``import a.b as c`` (binds ``c``)."""
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                self.aliases[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.aliases[top] = top
        self.forget_answers()

    def add_import_from(self, node: cst.ImportFrom) -> None:
        """Record ``from a.b import c as d`` (binds ``d`` to ``a.b.c``); relative imports are skipped."""
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{name}"
        self.forget_answers()

    def read_module(self, body: Sequence[cst.BaseStatement]) -> None:
        """Record the module-level ``import`` and ``from ... import`` statements of ``body``."""
        for stmt in body:
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if type(small) is cst.Import:
                        self.add_import(small)
                    elif type(small) is cst.ImportFrom:
                        self.add_import_from(small)

    def forget_answers(self) -> None:
        """Drop the answers kept per node: the next :meth:`resolve` reads the aliases again."""
        self._cache.clear()

    def resolve(self, expr: cst.CSTNode) -> Optional[str]:
        """The qualified name of an expression through the imports, or ``None``."""
        if type(expr) is cst.Name:
            return self.aliases.get(expr.value)  # as cheap as a look-up in the cache
        hit = self._cache.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        result = None
        dotted = dotted_name(expr)
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            target = self.aliases.get(head)
            if target is not None:
                result = f"{target}.{rest}" if rest else target
        self._cache[id(expr)] = (expr, result)
        return result


def torch_name(resolve: Callable[[cst.CSTNode], Optional[str]], expr: cst.CSTNode) -> Optional[str]:
    """``"X.Y"`` for an expression that ``resolve`` (an import table's or a rule context's) reads
    as ``torch.X.Y``; else ``None``."""
    qual = resolve(expr)
    if qual is not None and qual.startswith("torch."):
        return qual[len("torch."):]
    return None
