"""A per-channel vector of a module combined with the output of one of its convolutions.

``__init__`` makes ``self.bias = nn.Parameter(torch.zeros(cout))`` and ``self.conv =
nn.Conv2d(cin, cout, ...)``; ``forward`` computes ``self.conv(x) + self.bias``. A convolution's
output is ``(N, C, *spatial)`` (or ``(C, *spatial)`` unbatched): its channels are never the last
dim, while broadcasting lines a 1-D tensor up with the last dim. The vector is sized by the same
expression as the convolution's ``out_channels``, so it is a per-channel vector by construction:
on the last (spatial) dim it is wrong whatever the sizes, unless there is one channel (torch
raises unless the width equals the channel count, and is silent and wrong when it does).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.shape.bound_values import value_before
from shapecheck.semantic.eval.declared_numbers import rebound_names
from shapecheck.semantic.syntax import CallArgs, all_params, self_attribute_targets
from shapecheck.semantic.walk import walk

__all__ = ["ChannelVector", "channel_vector"]

_CONVS = {f"torch.nn.Conv{n}d": n for n in (1, 2, 3)} | {f"torch.nn.ConvTranspose{n}d": n for n in (1, 2, 3)}
_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "randn", "rand", "empty", "full"))
_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# activations that keep their input's shape: `F.relu(self.conv(x)) + self.bias` still has its channels at dim 1
_SAME_SHAPE = frozenset({"torch.relu", "torch.sigmoid", "torch.tanh", "torch.nn.functional.relu",
                         "torch.nn.functional.gelu", "torch.nn.functional.silu", "torch.nn.functional.leaky_relu",
                         "torch.nn.functional.elu", "torch.sigmoid_", "torch.nn.functional.relu6"})


class ChannelVector:
    """What :func:`channel_vector` found: the vector, the convolution, their shared size."""

    def __init__(self, vector: str, conv: str, size: str, spatial: int) -> None:
        self.vector = vector
        self.conv = conv
        self.size = size
        self.spatial = spatial

    def fix(self) -> str:
        """The view that puts the vector on the channel dim (``.view(1, -1, 1, 1)`` for 2-D)."""
        return f"{self.vector}.view(1, -1{', 1' * self.spatial})"


def _method(class_def: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    for stmt in class_def.body.body:
        if type(stmt) is cst.FunctionDef and stmt.name.value == name:
            return stmt
    return None


_ASSIGNMENTS: dict[int, tuple[cst.ClassDef, dict[str, list[tuple[cst.FunctionDef, cst.BaseExpression]]]]] = {}


def _self_assignments(class_def: cst.ClassDef, attr: str) -> list[tuple[cst.FunctionDef, cst.BaseExpression]]:
    """Every ``self.<attr> = value`` (and ``register_buffer("<attr>", value)``) in the methods of
    ``class_def``, with the method; a target that binds it otherwise counts with the value ``Name("_")``."""
    cached = _ASSIGNMENTS.get(id(class_def))
    if cached is None or cached[0] is not class_def:
        if len(_ASSIGNMENTS) > 256:
            _ASSIGNMENTS.clear()
        cached = (class_def, _all_self_assignments(class_def))
        _ASSIGNMENTS[id(class_def)] = cached
    return cached[1].get(attr, [])


def _all_self_assignments(class_def: cst.ClassDef) -> dict[str, list[tuple[cst.FunctionDef, cst.BaseExpression]]]:
    """What :func:`_self_assignments` gives, for every attribute of ``class_def`` at once."""
    found: dict[str, list[tuple[cst.FunctionDef, cst.BaseExpression]]] = {}
    unknown = cst.Name("_")
    for stmt in class_def.body.body:
        if type(stmt) is not cst.FunctionDef:
            continue
        params = all_params(stmt.params)
        if not params:
            continue
        me = params[0].name.value
        for node in walk(stmt.body, into_defs=True):
            if type(node) is cst.Assign:
                for t in node.targets:
                    direct = type(t.target) is cst.Attribute
                    for attr in self_attribute_targets(t.target, me):
                        found.setdefault(attr, []).append((stmt, node.value if direct else unknown))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                for attr in self_attribute_targets(node.target, me):
                    found.setdefault(attr, []).append((stmt, unknown))
            elif type(node) is cst.Call and dotted_name(node.func) in (f"{me}.register_buffer",
                                                                           f"{me}.register_parameter"):
                args = CallArgs(node)
                name = args.get(0, "name")
                if type(name) is cst.SimpleString and isinstance(name.evaluated_value, str):
                    value = args.get(1, "tensor") or args.get(1, "param")
                    found.setdefault(name.evaluated_value, []).append((stmt, value if value is not None else unknown))
    return found


def _only_init_value(class_def: cst.ClassDef, attr: str) -> Optional[tuple[cst.FunctionDef, cst.BaseExpression]]:
    """The one value ``__init__`` gives ``self.<attr>``, when nothing else in the class sets it."""
    found = _self_assignments(class_def, attr)
    if len(found) != 1 or found[0][0].name.value != "__init__":
        return None
    return found[0]


def _size_text(ctx, init: cst.FunctionDef, size: cst.BaseExpression) -> Optional[str]:
    """The text of a size expression that names one value in ``__init__``: an int literal, a name
    ``__init__`` never rebinds, or an attribute."""
    if type(size) is cst.Integer:
        return size.value
    if type(size) is cst.Name:
        return None if size.value in rebound_names(init) else size.value
    if type(size) is cst.Attribute:
        return dotted_name(size)
    return None


def _vector_size(ctx, class_def: cst.ClassDef, attr: str) -> Optional[tuple[cst.FunctionDef, str]]:
    """The size text of ``self.<attr>`` when ``__init__`` makes it a 1-D parameter or buffer
    (``nn.Parameter(torch.zeros(cout))``, ``register_buffer("b", torch.ones(cout))``)."""
    found = _only_init_value(class_def, attr)
    if found is None:
        return None
    init, value = found
    if type(value) is cst.Call and ctx.qualname(value.func) in _PARAMETER and value.args:
        value = value.args[0].value
    if type(value) is not cst.Call or ctx.qualname(value.func) not in _FACTORIES:
        return None
    args = CallArgs(value)
    if args.starred or not args.pos:
        return None
    qual = ctx.qualname(value.func)
    sizes = args.pos[:1] if qual == "torch.full" else args.pos
    if len(sizes) != 1 or (qual == "torch.full" and len(args.pos) != 2) or "size" in args.kw:
        return None
    text = _size_text(ctx, init, sizes[0])
    return (init, text) if text is not None else None


def _conv_channels(ctx, class_def: cst.ClassDef, attr: str) -> Optional[tuple[str, int]]:
    """``(out_channels text, spatial dims)`` when ``__init__`` makes ``self.<attr>`` a convolution."""
    found = _only_init_value(class_def, attr)
    if found is None:
        return None
    init, value = found
    if type(value) is not cst.Call:
        return None
    spatial = _CONVS.get(ctx.qualname(value.func) or "")
    if spatial is None:
        return None
    args = CallArgs(value)
    if args.starred:
        return None
    out = args.get(1, "out_channels")
    if out is None:
        return None
    text = _size_text(ctx, init, out)
    return (text, spatial) if text is not None else None


def _layer_call(ctx, expr: cst.BaseExpression, me: str, depth: int = 0) -> Optional[str]:
    """The attribute ``m`` when ``expr`` is ``self.m(...)``, an activation of it, or a name that
    holds one of those there (:func:`~shapecheck.rules.shape.bound_values.value_before`)."""
    if type(expr) is cst.Name and depth == 0:
        bound = value_before(ctx, expr.value, expr)
        return _layer_call(ctx, bound, me, 1) if bound is not None else None
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == me:
        return func.attr.value
    if ctx.qualname(func) in _SAME_SHAPE and expr.args and depth < 3:
        return _layer_call(ctx, expr.args[0].value, me, depth + 1)
    return None


def channel_vector(ctx, tensor: cst.BaseExpression, vector: cst.BaseExpression) -> Optional[ChannelVector]:
    """A :class:`ChannelVector` when ``vector`` is ``self.<p>``, a 1-D parameter or buffer sized
    by the ``out_channels`` of the convolution ``self.<m>`` whose output ``tensor`` is."""
    class_def, func = ctx.class_def, ctx.function
    if class_def is None or func is None or func.decorators:
        return None
    params = all_params(func.params)
    if not params or type(vector) is not cst.Attribute or dotted_name(vector.value) != params[0].name.value:
        return None
    me = params[0].name.value
    size = _vector_size(ctx, class_def, vector.attr.value)
    if size is None:
        return None
    layer = _layer_call(ctx, tensor, me)
    if layer is None:
        return None
    conv = _conv_channels(ctx, class_def, layer)
    if conv is None or size[1] != conv[0]:
        return None
    return ChannelVector(f"{me}.{vector.attr.value}", f"{me}.{layer}", conv[0], conv[1])
