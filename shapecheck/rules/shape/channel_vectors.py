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

import re
from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.shape.bound_values import call_bound_names, value_before
from shapecheck.semantic.eval.declared_numbers import rebound_names
from shapecheck.semantic.syntax import CallArgs, all_params, self_attribute_targets
from shapecheck.semantic.torch_api import NN_SHAPE_KEEPING_MODULES
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo

__all__ = ["ChannelVector", "channel_vector"]

_CONVS = {f"torch.nn.Conv{n}d": n for n in (1, 2, 3)} | {f"torch.nn.ConvTranspose{n}d": n for n in (1, 2, 3)}
_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "randn", "rand", "empty", "full", "Tensor",
                                               "FloatTensor"))
_FUNCTIONAL_CONVS = {f"torch.nn.functional.conv{n}d": n for n in (1, 2, 3)}
# ops that keep the channels at dim 1 and leave the spatial sizes generic (never 1 by construction)
_CHANNEL_KEEPING = frozenset({f"torch.nn.functional.{op}{n}d" for op in ("max_pool", "avg_pool") for n in (1, 2, 3)}
                             | {"torch.nn.functional.dropout", "torch.nn.functional.dropout2d",
                                "torch.nn.functional.batch_norm", "torch.nn.functional.instance_norm"})
_CHANNEL_KEEPING_LAYERS = NN_SHAPE_KEEPING_MODULES | {
    f"{op}{n}d" for op in ("MaxPool", "AvgPool", "Dropout", "BatchNorm", "InstanceNorm") for n in (1, 2, 3)}
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


_ASSIGNMENTS: NodeMemo[dict[str, list[tuple[cst.FunctionDef, cst.BaseExpression]]]] = NodeMemo()


def _self_assignments(class_def: cst.ClassDef, attr: str) -> list[tuple[cst.FunctionDef, cst.BaseExpression]]:
    """Every ``self.<attr> = value`` (and ``register_buffer("<attr>", value)``) in the methods of
    ``class_def``, with the method; a target that binds it otherwise counts with the value ``Name("_")``."""
    table = _ASSIGNMENTS.get(class_def)
    if table is None:
        table = _ASSIGNMENTS.put(class_def, _all_self_assignments(class_def))
    return table.get(attr, [])


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
            elif type(node) is cst.AugAssign or type(node) is cst.AnnAssign:
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
    found = _init_sizes(ctx, class_def, attr)
    if found is None or len(found[1]) != 1:
        return None
    text = _size_text(ctx, found[0], found[1][0])
    return (found[0], text) if text is not None else None


def _init_sizes(ctx, class_def: cst.ClassDef,
                attr: str) -> Optional[tuple[cst.FunctionDef, list[cst.BaseExpression]]]:
    """``__init__`` and the size arguments of the factory it makes ``self.<attr>`` with, as a
    parameter or buffer (``nn.Parameter(torch.randn(cout, cin, k, k))``)."""
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
    if (qual == "torch.full" and len(args.pos) != 2) or "size" in args.kw:
        return None
    return init, list(sizes)


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


def _conv_output(ctx, class_def: cst.ClassDef, expr: cst.BaseExpression, me: str,
                 depth: int = 0) -> Optional[tuple[str, str, int]]:
    """``(the convolution, its out_channels text, its spatial dims)`` when ``expr`` is the output
    of a convolution of the module: ``self.conv(...)`` with ``self.conv`` an ``nn.Conv*``,
    ``F.conv2d(x, self.weight)`` with ``self.weight`` made ``(cout, cin, kh, kw)`` in
    ``__init__``, through activations and shape-keeping layers of the module (``self.bn``,
    ``self.act``), or a name that holds one of those there
    (:func:`~shapecheck.rules.shape.bound_values.value_before`)."""
    if depth > 4:
        return None
    if type(expr) is cst.Name:
        bound = value_before(ctx, expr.value, expr)
        return _conv_output(ctx, class_def, bound, me, depth + 1) if bound is not None else None
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == me:
        conv = _conv_channels(ctx, class_def, func.attr.value)
        if conv is not None:
            return f"{me}.{func.attr.value}", conv[0], conv[1]
        if len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star \
                and _shape_keeping_layer(ctx, class_def, func.attr.value):
            return _conv_output(ctx, class_def, expr.args[0].value, me, depth + 1)
        return None
    qual = ctx.qualname(func)
    if (qual in _SAME_SHAPE or qual in _CHANNEL_KEEPING) and expr.args:
        return _conv_output(ctx, class_def, expr.args[0].value, me, depth + 1)
    spatial = _FUNCTIONAL_CONVS.get(qual or "")
    weight = CallArgs(expr).get(1, "weight")
    if spatial is None or type(weight) is not cst.Attribute or dotted_name(weight.value) != me:
        return None
    found = _init_sizes(ctx, class_def, weight.attr.value)
    if found is None or len(found[1]) != spatial + 2:
        return None
    text = _size_text(ctx, found[0], found[1][0])
    return (f"{qual.rsplit('.', 1)[-1]}(..., {me}.{weight.attr.value})", text, spatial) if qual and text else None


def _shape_keeping_layer(ctx, class_def: cst.ClassDef, attr: str) -> bool:
    """``__init__`` makes ``self.<attr>`` a ``torch.nn`` layer whose output keeps its input's
    channels at dim 1 (an activation, a norm, a pooling)."""
    found = _only_init_value(class_def, attr)
    if found is None or type(found[1]) is not cst.Call:
        return False
    qual = ctx.qualname(found[1].func) or ""
    return qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1] in _CHANNEL_KEEPING_LAYERS


def _local_factory_sizes(ctx, expr: cst.BaseExpression) -> Optional[list[cst.BaseExpression]]:
    """The size arguments of the factory a local name was bound to just before (``b =
    torch.zeros(16)``, ``w = nn.Parameter(torch.randn(16, 3, 3, 3))``)."""
    if type(expr) is not cst.Name or expr.value not in call_bound_names(ctx):
        return None  # the name holds no call's result here (a factory's least of all)
    value = value_before(ctx, expr.value, expr, at_module=True)
    if type(value) is cst.Call and ctx.qualname(value.func) in _PARAMETER and value.args:
        value = value.args[0].value
    if type(value) is not cst.Call or ctx.qualname(value.func) not in _FACTORIES - {"torch.full"}:
        return None
    args = CallArgs(value)
    return None if args.starred or args.kw else list(args.pos)


def _local_size(ctx, size: cst.BaseExpression) -> Optional[str]:
    """The text of a size that names one value throughout the function (or module) being
    checked: an int literal, or a parameter the function never rebinds."""
    if type(size) is cst.Integer:
        return size.value
    func = ctx.function
    if type(size) is cst.Name and func is not None and size.value not in rebound_names(func) \
            and any(p.name.value == size.value for p in all_params(func.params)):
        return size.value
    return None


def _local_conv_output(ctx, expr: cst.BaseExpression, depth: int = 0) -> Optional[tuple[str, str, int]]:
    """What :func:`_conv_output` finds, for a convolution held in a local name (``conv =
    nn.Conv2d(3, 16, 3)``, then ``conv(x)``) or run by ``F.conv2d(x, w)`` with a local weight."""
    if depth > 4:
        return None
    if type(expr) is cst.Name:
        bound = value_before(ctx, expr.value, expr, at_module=True)
        return _local_conv_output(ctx, bound, depth + 1) if bound is not None else None
    if type(expr) is not cst.Call:
        return None
    qual = ctx.qualname(expr.func)
    if (qual in _SAME_SHAPE or qual in _CHANNEL_KEEPING) and expr.args:
        return _local_conv_output(ctx, expr.args[0].value, depth + 1)
    args = CallArgs(expr)
    if type(expr.func) is cst.Name and qual is None:
        layer = value_before(ctx, expr.func.value, expr, at_module=True)
        spatial = _CONVS.get(ctx.qualname(layer.func) or "") if type(layer) is cst.Call else None
        if spatial is None or type(layer) is not cst.Call or CallArgs(layer).starred:
            return None
        out = CallArgs(layer).get(1, "out_channels")
        text = _local_size(ctx, out) if out is not None else None
        return (expr.func.value, text, spatial) if text is not None else None
    spatial = _FUNCTIONAL_CONVS.get(qual or "")
    weight = args.get(1, "weight")
    sizes = _local_factory_sizes(ctx, weight) if spatial is not None and weight is not None else None
    if sizes is None or spatial is None or weight is None or len(sizes) != spatial + 2:
        return None
    text = _local_size(ctx, sizes[0])
    return (f"{qual.rsplit('.', 1)[-1]}(..., {short(ctx, weight, 16)})", text, spatial) if qual and text else None


def _local_channel_vector(ctx, tensor: cst.BaseExpression, vector: cst.BaseExpression) -> Optional[ChannelVector]:
    """A :class:`ChannelVector` for a vector and a convolution held in local names."""
    sizes = _local_factory_sizes(ctx, vector)
    if sizes is None or len(sizes) != 1:
        return None
    size = _local_size(ctx, sizes[0])
    conv = _local_conv_output(ctx, tensor)
    if size is None or conv is None or conv[1] != size:
        return None
    return ChannelVector(short(ctx, vector, 16), conv[0], conv[1], conv[2])


#: how a convolution's name is written (``nn.Conv2d``, ``ConvTranspose1d``, ``F.conv3d``): the
#: qualified names above end with one, so a file whose text has none holds no convolution
_CONV_TEXT = re.compile(r"[Cc]onv(?:Transpose)?[123]d")
#: the text last read and whether it names a convolution
_LAST_TEXT: list[tuple[str, bool]] = []


def _names_convolutions(ctx) -> bool:
    """The file's text names a convolution (True when the text is not at hand)."""
    text = getattr(ctx, "text", None)
    if text is None:
        return True
    if _LAST_TEXT and _LAST_TEXT[0][0] is text:
        return _LAST_TEXT[0][1]
    found = _CONV_TEXT.search(text) is not None
    _LAST_TEXT[:] = [(text, found)]
    return found


def channel_vector(ctx, tensor: cst.BaseExpression, vector: cst.BaseExpression) -> Optional[ChannelVector]:
    """A :class:`ChannelVector` when ``vector`` is ``self.<p>``, a 1-D parameter or buffer sized
    by the ``out_channels`` of the convolution ``self.<m>`` whose output ``tensor`` is (or both
    are held in local names, :func:`_local_channel_vector`)."""
    if not _names_convolutions(ctx):
        return None
    class_def, func = ctx.class_def, ctx.function
    if type(vector) is cst.Name:
        return _local_channel_vector(ctx, tensor, vector)
    if class_def is None or func is None or func.decorators:
        return None
    params = all_params(func.params)
    if not params or type(vector) is not cst.Attribute or dotted_name(vector.value) != params[0].name.value:
        return None
    me = params[0].name.value
    size = _vector_size(ctx, class_def, vector.attr.value)
    if size is None:
        return None
    conv = _conv_output(ctx, class_def, tensor, me)
    if conv is None or size[1] != conv[1]:
        return None
    return ChannelVector(f"{me}.{vector.attr.value}", conv[0], conv[1], conv[2])
