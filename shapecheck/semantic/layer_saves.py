"""What a call of a module saves for backward: ``nn`` layers from the tables of
:mod:`~shapecheck.semantic.torch_api`, and the module classes of the file whose ``forward`` saves
its input before anything else can happen to it.

``self.ln(x)`` with ``self.ln = nn.LayerNorm(d)`` saves ``x`` (for the gradient of the layer's
weight), so ``x += self.ln(x)`` breaks backward. A module class of the file saves its input when
the straight-line start of its ``forward`` (no branch, loop, ``with`` or ``try`` before it) passes
that input, unchanged, to such a layer of its own, to an ``nn.functional`` function together with
one of its own parameters as the weight (``F.layer_norm(input, ..., self.weight)``), or to a
module class of the file that does the same.

A call may also save the module's own weights (:func:`saves_weights`), which an optimizer's
``step()`` then changes in place: ``D(fake)`` with ``fake = G(z)`` saves ``D``'s first layer's
weight for the gradient of ``fake``; a recurrent layer saves its weights whatever its input; a
module class of the file that chains two layers with weights saves the second one's.
"""

from __future__ import annotations

from typing import Collection, Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, MODULE, TENSOR, Fact
from shapecheck.semantic.model import SemanticModel
from shapecheck.semantic.node_memo import NodeMemo
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


#: ``nn`` layers whose backward needs their weights whatever the input: a recurrent layer feeds
#: each step's hidden state (computed from its weights) to the next
WEIGHTS_ALWAYS = frozenset({"RNN", "LSTM", "GRU"})
#: ``nn`` layers whose input gradient needs their weights
WEIGHTS_FOR_INPUT = WEIGHT_LAYERS_SAVING_INPUT | WEIGHTS_ALWAYS | {"Bilinear", "MultiheadAttention", "Sequential"}


def saves_weights(model: Optional[SemanticModel], module: Fact, input_grad: Optional[bool]) -> bool:
    """Calling ``module`` saves some of its own parameters for backward (so that an optimizer
    ``step()`` over them breaks a later backward through the call); ``input_grad``: whether any
    of its tensor arguments requires grad. A layer's input gradient needs its weights; a module
    class of the file that chains two layers with weights saves the second one's whatever its
    input, since that layer's input requires grad."""
    qual = module.qual
    if module.kind != MODULE or qual is None or module.trainable is not True:
        return False
    if qual.startswith("torch.nn."):
        layer = qual[len("torch.nn."):]
        return layer in WEIGHTS_ALWAYS or (input_grad is True and layer in WEIGHTS_FOR_INPUT)
    if qual.startswith("torch.") or model is None:
        return False
    return input_grad is True or _weight_layers(model, qual) >= 2


def _weight_layers(model: SemanticModel, class_name: str, depth: int = 0) -> int:
    """How many layers with weights a module class of the file holds as attributes (its own
    module classes counted by theirs), when its ``forward`` calls layers one after another."""
    if depth > _DEPTH or not _chains_layers(model, class_name):
        return 0
    count = 0
    for held in model.class_attrs.get(class_name, {}).values():
        qual = held.qual
        if held.kind != MODULE or held.trainable is not True or qual is None:
            continue
        if qual.startswith("torch.nn."):
            count += 2 if qual[len("torch.nn."):] in WEIGHTS_ALWAYS else \
                int(qual[len("torch.nn."):] in WEIGHT_LAYERS_SAVING_INPUT)
        elif not qual.startswith("torch."):
            count += _weight_layers(model, qual, depth + 1)
    return count


def _chains_layers(model: SemanticModel, class_name: str) -> bool:
    """``forward`` of ``class_name`` passes the result of one ``self.<layer>(...)`` call into
    another (``self.fc2(F.relu(self.fc1(s)))``, or through a name it binds)."""
    callee = forward_of(model, class_name)
    if callee is None or callee.home is not None:
        return False
    known = _CHAINS.get(callee.node)
    if known is None:
        known = _CHAINS.put(callee.node, _chains_in(callee.node))
    return known


#: id of a ``forward`` -> (the node, whether it chains two layer calls); see :func:`_chains_layers`
_CHAINS: NodeMemo[bool] = NodeMemo(limit=4096)


def _chains_in(forward: cst.FunctionDef) -> bool:
    """The test of :func:`_chains_layers` on the body of ``forward``."""
    nodes = list(below(forward.body))
    fed = {n for node in nodes if type(node) is cst.Assign and _layer_call_inside(node.value, ())
           for t in node.targets for n in _names(t.target)}
    return any(type(node) is cst.Call and _self_call(node) and any(_layer_call_inside(a.value, fed) for a in node.args)
               for node in nodes)


def _self_call(node: cst.Call) -> bool:
    dotted = dotted_name(node.func)
    return dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1


def _layer_call_inside(expr: cst.BaseExpression, fed: Collection[str]) -> bool:
    """``expr`` holds a ``self.<layer>(...)`` call, or reads a name bound from one."""
    for node in [expr, *below(expr)]:
        if type(node) is cst.Call and _self_call(node):
            return True
        if type(node) is cst.Name and node.value in fed:
            return True
    return False


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
