"""A parameter of a layer by ``isinstance``: inside ``if isinstance(m, nn.Linear):`` (the body,
not the ``else``), ``m.weight`` and ``m.bias`` are ``nn.Parameter``s of an ``nn`` layer, leaves
that require grad (the ``if m.bias is not None`` of an optional bias aside, which the code must
test before it uses one).

The usual weight-init function (``def _init_weights(self, module)``, run by ``self.apply``)
narrows its argument this way; changing such a weight in place outside ``torch.no_grad()`` raises.
A function that a ``with torch.no_grad()``/``torch.inference_mode()`` block of the file names,
or that is passed on (``self.apply(self._init_weights)``) inside one, is left alone: its caller
may run it with grad mode off.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from shapecheck.semantic.walk import walk

#: ``nn`` layers whose ``weight`` (and ``bias``, when present) are parameters that require grad
#: when the layer is built with its defaults
_LAYERS_WITH_PARAMETERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "PReLU",
})
_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.set_grad_enabled"})


def narrowed_layer(ctx, target: cst.BaseExpression) -> Optional[str]:
    """The layer (``nn.Linear``) that an enclosing ``isinstance`` test makes ``target`` (``m.weight``
    or ``m.bias``) a parameter of, when the function cannot run with grad mode off; else ``None``."""
    if type(target) is not cst.Attribute or target.attr.value not in ("weight", "bias") \
            or type(target.value) is not cst.Name:
        return None
    function, statement = ctx.function, ctx.statement
    if function is None or statement is None:
        return None
    name = target.value.value
    if _rebinds(function, name):
        return None
    for test in _tests_around(function.body, statement):
        layer = _isinstance_layer(ctx, test, name)
        if layer is not None:
            return None if _run_without_grad(ctx, function.name.value) else layer
    return None


def _tests_around(block: cst.CSTNode, statement: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The tests of the ``if`` statements whose body (not ``else``) holds ``statement``."""
    for node in walk(block):
        if type(node) is cst.If and any(n is statement for n in walk(node.body)):
            yield node.test


def _isinstance_layer(ctx, test: cst.BaseExpression, name: str) -> Optional[str]:
    """``test`` is ``isinstance(name, nn.L)`` (or a tuple of such layers, or that ``and`` more):
    the layer named, when each is in the table."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return _isinstance_layer(ctx, test.left, name) or _isinstance_layer(ctx, test.right, name)
    if type(test) is not cst.Call or type(test.func) is not cst.Name or test.func.value != "isinstance" \
            or len(test.args) != 2:
        return None
    subject, classes = test.args[0].value, test.args[1].value
    if type(subject) is not cst.Name or subject.value != name:
        return None
    options = [e.value for e in classes.elements] if type(classes) is cst.Tuple else [classes]
    layers = []
    for option in options:
        qual = ctx.qualname(option)
        if qual is None or not qual.startswith("torch.nn.") or qual[len("torch.nn."):] not in _LAYERS_WITH_PARAMETERS:
            return None
        layers.append("nn." + qual[len("torch.nn."):])
    return layers[0] if layers else None


def _rebinds(function: cst.FunctionDef, name: str) -> bool:
    """``name`` is assigned in ``function`` (beyond being its parameter)."""
    for node in walk(function.body):
        targets: list[cst.CSTNode] = []
        if type(node) is cst.Assign:
            targets = [t.target for t in node.targets]
        elif type(node) in (cst.For, cst.AugAssign, cst.AnnAssign, cst.NamedExpr):
            targets = [node.target]  # type: ignore[attr-defined]
        if any(type(n) is cst.Name and n.value == name for t in targets for n in [t, *walk(t)]):
            return True
    return False


def _run_without_grad(ctx, function_name: str) -> bool:
    """A grad-off ``with`` block of the file names ``function_name``."""
    for node in walk(ctx.module):
        if type(node) is not cst.With:
            continue
        if not any(type(item.item) is cst.Call and ctx.qualname(item.item.func) in _GRAD_OFF for item in node.items):
            continue
        if any(type(n) is cst.Name and n.value == function_name for n in walk(node.body)):
            return True
    return False
