"""Layers built with ``inplace=True``: calling ``self.drop(x)`` after ``self.drop =
nn.Dropout(p, inplace=True)`` in ``__init__`` changes ``x`` in place (in training mode, where a
module's ``forward`` is differentiated).

A dropout with probability 0 returns its input untouched (torch skips the in-place write), so
a dropout whose probability is not a number literal changes its input only when that
probability is not 0: :func:`inplace_layer_call` gives that probability's source text then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.syntax import dotted_name, keyword, positional
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo

Resolve = Callable[[cst.CSTNode], Optional[str]]

#: activations with an ``inplace`` argument (``nn.ReLU(inplace=True)``)
_ACTIVATIONS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "Hardtanh", "Hardswish", "Hardsigmoid",
    "SiLU", "Mish", "Threshold",
})
#: dropouts with an ``inplace`` argument; their first argument is the probability ``p``
_DROPOUTS = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"})


@dataclass(frozen=True)
class InplaceLayer:
    """A layer call that writes into its input: the layer's class, and for a dropout whose
    probability may be 0 the source text of that probability (``None``: always writes)."""

    layer: str
    unless_zero: Optional[str] = None


#: id of a class -> (the class, attribute -> the in-place layer ``__init__`` assigns to it)
_TABLES: NodeMemo[dict[str, Optional[InplaceLayer]]] = NodeMemo()


def inplace_layer_call(resolve: Resolve, class_def: Optional[cst.ClassDef], call: cst.Call) -> Optional[InplaceLayer]:
    """For ``self.<attr>(x, ...)`` in a method of ``class_def`` whose ``__init__`` assigns
    ``self.<attr>`` only in-place layers of one kind: that layer; else ``None``."""
    if class_def is None or not positional(call):
        return None
    dotted = dotted_name(call.func)
    if dotted is None or not dotted.startswith("self.") or dotted.count(".") != 1:
        return None
    return _table(resolve, class_def).get(dotted[len("self."):])


def _table(resolve: Resolve, class_def: cst.ClassDef) -> dict[str, Optional[InplaceLayer]]:
    cached = _TABLES.get(class_def)
    if cached is not None:
        return cached
    table: dict[str, Optional[InplaceLayer]] = {}
    for statement in class_def.body.body:
        if type(statement) is cst.FunctionDef and statement.name.value == "__init__":
            for node in walk(statement.body):
                if type(node) is not cst.Assign:
                    continue
                for target in node.targets:
                    dotted = dotted_name(target.target)
                    if dotted is None or not dotted.startswith("self.") or dotted.count(".") != 1:
                        continue
                    attr = dotted[len("self."):]
                    layer = _inplace_layer(resolve, node.value)
                    table[attr] = layer if attr not in table or table[attr] == layer else None
    return _TABLES.put(class_def, table)


def _inplace_layer(resolve: Resolve, value: cst.BaseExpression) -> Optional[InplaceLayer]:
    """``nn.Dropout(p, inplace=True)``, ``nn.ReLU(inplace=True)``: the layer; else ``None``."""
    if type(value) is not cst.Call:
        return None
    qual = resolve(value.func)
    if qual is None or not qual.startswith("torch.nn."):
        return None
    layer = qual[len("torch.nn."):]
    inplace = keyword(value, "inplace")
    if inplace is None or type(inplace.value) is not cst.Name or inplace.value.value != "True":
        return None
    if layer in _ACTIVATIONS:
        return InplaceLayer(layer)
    if layer not in _DROPOUTS:
        return None
    args = positional(value)
    p_arg = keyword(value, "p")
    p = args[0] if args else (p_arg.value if p_arg is not None else None)
    if p is None:
        return InplaceLayer(layer)  # the default probability, 0.5
    if type(p) in (cst.Integer, cst.Float):
        return InplaceLayer(layer) if float(p.value) != 0 else None  # type: ignore[attr-defined]
    source = dotted_name(p)
    return InplaceLayer(layer, source) if source is not None else None
