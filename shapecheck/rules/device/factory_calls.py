"""Whether a function may call a torch factory at all, read from its syntax alone.

A call resolves to ``torch.<factory>`` (``torch.zeros``, ``T.arange``, ``zeros`` after ``from torch
import zeros``; a legacy constructor, ``torch.LongTensor``, counts as one) only when the
factory's name is the last part of the callee as written, or when the callee is a plain name
that an import binds to it (``from torch import zeros as z``). A function with no such call
makes no factory result: SC403 need not follow its names.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, Iterator, Optional, Sequence, Union

import libcst as cst

from shapecheck.semantic.node_memo import NodeMemo

from shapecheck.semantic.syntax import all_params, dotted_name, sub_blocks
from shapecheck.semantic.torch_api import FACTORIES_AND_LEGACY as _MAKERS
from shapecheck.semantic.walk import walk

__all__ = ["definition_parts", "factory_aliases", "may_call_factory", "may_make_here"]

_TORCH_FACTORIES = frozenset(f"torch.{name}" for name in _MAKERS)
#: the compound statements whose blocks :func:`~shapecheck.semantic.syntax.sub_blocks` gives in full
_BLOCK_STATEMENTS = frozenset({cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar})


#: the factory aliases of the modules met last (a rule asks once per function)
_ALIASES: NodeMemo[frozenset[str]] = NodeMemo(limit=4)


def factory_aliases(module: cst.Module) -> frozenset[str]:
    """The local names that an import anywhere in ``module`` binds to a torch factory
    (``from torch import zeros as z``: ``z``)."""
    known = _ALIASES.get(module)
    if known is None:
        known = _ALIASES.put(module, _factory_aliases(module))
    return known


def _factory_aliases(module: cst.Module) -> frozenset[str]:
    found: set[str] = set()
    for node in _imports(module.body):
        if type(node) is cst.ImportFrom:
            if node.module is None or isinstance(node.names, cst.ImportStar):
                continue
            module_name = dotted_name(node.module)
            for alias in node.names:
                name = dotted_name(alias.name)
                if f"{module_name}.{name}" in _TORCH_FACTORIES:
                    found.add(_local(alias, name))
        else:
            for alias in node.names:  # type: ignore[union-attr]
                name = dotted_name(alias.name)
                if name in _TORCH_FACTORIES:
                    found.add(_local(alias, name))
    return frozenset(found)


def _imports(block: Sequence[cst.CSTNode]) -> Iterator[Union[cst.Import, cst.ImportFrom]]:
    """The import statements of ``block`` and of every block inside it, nested definitions included
    (an import is always a statement)."""
    for stmt in block:
        tp = type(stmt)
        if tp is cst.SimpleStatementLine:
            for small in stmt.body:  # type: ignore[attr-defined]
                if type(small) is cst.Import or type(small) is cst.ImportFrom:
                    yield small
        elif tp is cst.FunctionDef or tp is cst.ClassDef:
            body = stmt.body  # type: ignore[attr-defined]
            yield from _imports(body.body if type(body) is cst.IndentedBlock else [cst.SimpleStatementLine(body.body)])
        elif tp in _BLOCK_STATEMENTS:
            for sub in sub_blocks(stmt):
                yield from _imports(sub)
        elif tp is not cst.Import and tp is not cst.ImportFrom:  # `match`, a suite's small statements
            for node in walk(stmt, into_defs=True):
                if type(node) is cst.Import or type(node) is cst.ImportFrom:
                    yield node
        else:
            yield stmt  # type: ignore[misc]


def _local(alias: cst.ImportAlias, name: Optional[str]) -> str:
    """The local name an import alias binds (its ``as`` name, else the name itself)."""
    if alias.asname is not None and type(alias.asname.name) is cst.Name:
        return alias.asname.name.value
    return name or ""


def may_call_factory(definition: Union[cst.FunctionDef, cst.ClassDef, cst.Lambda], aliases: frozenset[str]) -> bool:
    """``definition`` (its decorators, defaults, annotations and nested definitions included)
    holds a call whose callee may resolve to a torch factory: its last name is a factory's, or it
    is one of ``aliases`` (:func:`factory_aliases`)."""
    return any(parts_call_factory(definition_parts(definition), definition, aliases))


def parts_call_factory(parts: Iterable[cst.CSTNode], definition: cst.CSTNode,
                       aliases: frozenset[str]) -> Iterator[bool]:
    """For each node of ``parts`` (of ``definition``), and of the definitions nested in them,
    whether it is a call that may resolve to a torch factory (see :func:`may_call_factory`)."""
    for part in parts:
        for node in chain((part,), walk(part)):
            yield may_make_here(node, definition, aliases)


def may_make_here(node: cst.CSTNode, definition: cst.CSTNode, aliases: frozenset[str]) -> bool:
    """``node`` (met in the walk of ``definition``) is a call that may resolve to a torch factory,
    or a definition nested in ``definition`` that holds one (:func:`walk` does not enter those)."""
    tp = type(node)
    if tp is cst.Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute:
            return func.attr.value in _MAKERS
        return type(func) is cst.Name and (func.value in _MAKERS or func.value in aliases)
    if (tp is cst.FunctionDef or tp is cst.ClassDef or tp is cst.Lambda) and node is not definition:
        return may_call_factory(node, aliases)  # type: ignore[arg-type]
    return False


def definition_parts(definition: Union[cst.FunctionDef, cst.ClassDef, cst.Lambda]) -> list[cst.CSTNode]:
    """The expressions and the body of a definition, each to walk (:func:`walk` does not look into
    parameters or into nested definitions)."""
    parts: list[cst.CSTNode] = []
    if type(definition) is not cst.Lambda:
        parts.extend(d.decorator for d in definition.decorators)  # type: ignore[union-attr]
    if type(definition) is cst.ClassDef:
        parts.extend(a.value for a in (*definition.bases, *definition.keywords))
    else:
        for param in all_params(definition.params):  # type: ignore[union-attr]
            parts.extend(x for x in (param.default, param.annotation.annotation if param.annotation else None)
                         if x is not None)
        returns = getattr(definition, "returns", None)
        if returns is not None:
            parts.append(returns.annotation)
    parts.append(definition.body)
    return parts
