"""What a call of a module saves for backward: ``nn`` layers from the tables of
:mod:`~shapecheck.semantic.torch_api`, and the module classes of the file whose ``forward`` saves
its input before anything else can happen to it.

``self.ln(x)`` with ``self.ln = nn.LayerNorm(d)`` saves ``x`` (for the gradient of the layer's
weight), so ``x += self.ln(x)`` breaks backward. A module class of the file saves its input when
the straight-line start of its ``forward`` (no branch, loop, ``with`` or ``try`` before it) passes
that input, unchanged, to such a layer of its own, to an ``nn.functional`` function together with
one of its own parameters as the weight (``F.layer_norm(input, ..., self.weight)``), or to a
module class of the file that does the same.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, MODULE, TENSOR, Fact
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.saved_tensors import below
from shapecheck.semantic.summaries import forward_of
from shapecheck.semantic.syntax import all_params, dotted_name, positional
from shapecheck.semantic.torch_api import (
    FUNCTIONS_SAVING_INPUT_FOR_WEIGHT, LAYERS_SAVING_INPUT, LAYERS_SAVING_RESULT, RESULT, SELF,
    WEIGHT_LAYERS_SAVING_INPUT,
)

#: how deep module classes of the file are followed into each other's ``forward``
_DEPTH = 3


def module_saves(model: Optional[SemanticModel], module: Fact, input_grad: Optional[bool]) -> frozenset[str]:
    """The roles (``self``: the first argument, ``result``) that calling ``module`` saves;
    ``input_grad`` says whether that argument requires grad (``None``: unknown)."""
    qual = module.qual
    if module.kind != MODULE or qual is None:
        return frozenset()
    if qual.startswith("torch.nn."):
        layer = qual[len("torch.nn."):]
        if layer in WEIGHT_LAYERS_SAVING_INPUT and module.trainable is True:
            return frozenset({SELF})
        if input_grad is True and layer in LAYERS_SAVING_INPUT:
            return frozenset({SELF})
        if input_grad is True and layer in LAYERS_SAVING_RESULT:
            return frozenset({RESULT})
        return frozenset()
    if model is not None and module.trainable is True and forward_saves_input(model, qual):
        return frozenset({SELF})
    return frozenset()


def forward_saves_input(model: SemanticModel, class_name: str, depth: int = 0) -> bool:
    """``forward`` of ``class_name`` (a module class of this file) saves its first input for
    backward on every call, whatever that input is (see the module docstring)."""
    callee = forward_of(model, class_name)
    if callee is None or callee.home is not None or depth > _DEPTH:
        return False
    params = all_params(callee.node.params)
    if len(params) < 2:
        return False
    name = params[1].name.value
    attrs = model.class_attrs.get(class_name, {})
    for statement in callee.node.body.body:
        if type(statement) is not cst.SimpleStatementLine:
            return False
        for small in statement.body:
            value = getattr(small, "value", None)
            if isinstance(value, cst.BaseExpression) and _saves(model, attrs, value, name, depth):
                return True
            if type(small) is cst.AugAssign or (type(small) is cst.Assign and any(
                    name in _names(t.target) for t in small.targets)):
                return False
    return False


def _names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _names(e.value)}
    return {target.value} if type(target) is cst.Name else set()


def _saves(model: SemanticModel, attrs: dict[str, Fact], value: cst.BaseExpression, name: str, depth: int) -> bool:
    """``value`` calls a layer or function that saves the parameter ``name`` (see the module docstring)."""
    for node in [value, *below(value)]:
        if type(node) is not cst.Call:
            continue
        args = positional(node)
        if not args or type(args[0]) is not cst.Name or args[0].value != name:
            continue
        dotted = dotted_name(node.func)
        held = attrs.get(dotted) if dotted is not None and dotted.count(".") == 1 \
            and dotted.startswith("self.") else None
        if held is not None and held.kind == MODULE and held.trainable is True and held.qual is not None:
            qual = held.qual
            if qual.startswith("torch.nn.") and qual[len("torch.nn."):] in WEIGHT_LAYERS_SAVING_INPUT:
                return True
            if not qual.startswith("torch.") and forward_saves_input(model, qual, depth + 1):
                return True
            continue
        resolved = model.imports.resolve(node.func)
        position = FUNCTIONS_SAVING_INPUT_FOR_WEIGHT.get(resolved[len("torch."):]) \
            if resolved is not None and resolved.startswith("torch.") else None
        if position is None:
            continue
        weight = args[position] if len(args) > position else next(
            (a.value for a in node.args if a.keyword is not None and a.keyword.value == "weight"), None)
        weight_name = dotted_name(weight) if weight is not None else None
        owned = attrs.get(weight_name) if weight_name is not None else None
        if owned is not None and owned.kind == TENSOR and owned.grad == LEAF_REQUIRES_GRAD:
            return True
    return False
