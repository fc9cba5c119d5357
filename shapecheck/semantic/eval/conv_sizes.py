"""Output sizes of convolutions and poolings whose geometry and input sizes are known ints.

torch computes each spatial size of ``nn.Conv2d``/``nn.MaxPool2d``/``nn.AvgPool2d`` (and their
1-D, 3-D and ``F`` forms) as ``(L + 2*padding - dilation*(kernel - 1) - 1) // stride + 1``;
pooling's stride defaults to its kernel size and average pooling has no dilation. The
geometry of a layer is kept on its module fact as ``features``: ``(in_channels, out_channels,
*kernel, *stride, *padding, *dilation)`` for a convolution, ``(*kernel, *stride, *padding,
*dilation)`` for a pooling, which ``ceil_mode=True`` extends with a trailing ``1``: each size is
then rounded up, but the last window must start inside the input or its left padding. A
convolution's ``padding="valid"`` is 0; ``padding="same"`` keeps each size (torch allows it with
stride 1 only), so its geometry is that of a 1-wide kernel. Anything not a literal int leaves the
sizes unknown.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.syntax import CallArgs
from shapecheck.shapes import Dim, Shape

#: ``nn`` convolution layers, by their number of spatial dims
CONV_LAYERS = {"Conv1d": 1, "Conv2d": 2, "Conv3d": 3}
#: ``nn`` pooling layers, by their number of spatial dims
POOL_LAYERS = {"MaxPool1d": 1, "MaxPool2d": 2, "MaxPool3d": 3, "AvgPool1d": 1, "AvgPool2d": 2, "AvgPool3d": 3}
#: ``F`` pooling functions, by their number of spatial dims
POOL_FUNCTIONS = {"max_pool1d": 1, "max_pool2d": 2, "max_pool3d": 3, "avg_pool1d": 1, "avg_pool2d": 2,
                  "avg_pool3d": 3}

#: positions of (kernel_size, stride, padding, dilation, ceil_mode) in the constructor
_CONV_POSITIONS = {"kernel_size": 2, "stride": 3, "padding": 4, "dilation": 5}
_MAX_POOL_POSITIONS = {"kernel_size": 0, "stride": 1, "padding": 2, "dilation": 3, "ceil_mode": 5}
_AVG_POOL_POSITIONS = {"kernel_size": 0, "stride": 1, "padding": 2, "ceil_mode": 3}


def _ints(ev: Eval, expr: Optional[cst.BaseExpression], n: int, default: Optional[int]) -> Optional[tuple[int, ...]]:
    """An int (or tuple of ``n`` ints) argument as ``n`` ints; ``default`` when absent."""
    if expr is None:
        return (default,) * n if default is not None else None
    value = ev.fact(expr).value
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    if isinstance(value, tuple) and len(value) == n and all(isinstance(v, int) and not isinstance(v, bool)
                                                            for v in value):
        return value
    return None


def _geometry(ev: Eval, args: CallArgs, positions: dict[str, int], n: int,
              pooling: bool) -> Optional[tuple[int, ...]]:
    """``(*kernel, *stride, *padding, *dilation)`` of a call, or ``None`` when one is not known."""
    if args.starred:
        return None
    ceil = positions.get("ceil_mode")
    ceil_mode = False
    if ceil is not None:
        flag = args.get(ceil, "ceil_mode")
        value = ev.fact(flag).value if flag is not None else False
        if type(value) is not bool:
            return None
        ceil_mode = value
    padding_expr = args.get(positions["padding"], "padding")
    word = ev.fact(padding_expr).value if padding_expr is not None and not pooling else None
    if word == "same":
        return _same(ev, args, positions, n)
    kernel = _ints(ev, args.get(positions["kernel_size"], "kernel_size"), n, None)
    if kernel is None:
        return None
    stride_expr = args.get(positions["stride"], "stride")
    if pooling and stride_expr is not None and type(stride_expr) is cst.Name and stride_expr.value == "None":
        stride_expr = None
    stride = kernel if pooling and stride_expr is None else _ints(ev, stride_expr, n, 1)
    padding = (0,) * n if word == "valid" else _ints(ev, padding_expr, n, 0)
    dilation = _ints(ev, args.get(positions["dilation"], "dilation"), n, 1) if "dilation" in positions else (1,) * n
    if stride is None or padding is None or dilation is None:
        return None
    return kernel + stride + padding + dilation + ((1,) if ceil_mode else ())


def _same(ev: Eval, args: CallArgs, positions: dict[str, int], n: int) -> Optional[tuple[int, ...]]:
    """The geometry of a convolution with ``padding="same"``: each size kept, as by a 1-wide
    kernel; ``None`` unless its stride is 1 (torch rejects any other) and its kernel is known."""
    kernel = _ints(ev, args.get(positions["kernel_size"], "kernel_size"), n, None)
    stride = _ints(ev, args.get(positions["stride"], "stride"), n, 1)
    if kernel is None or stride != (1,) * n:
        return None
    return (1,) * n + (1,) * n + (0,) * n + (1,) * n


def layer_geometry(ev: Eval, name: str, args: CallArgs) -> Optional[tuple[Dim, ...]]:
    """The ``features`` of ``nn.<name>(args)`` for a convolution or pooling layer (see the
    module docstring), or ``None``."""
    if name in CONV_LAYERS:
        channels = _ints(ev, args.get(0, "in_channels"), 1, None), _ints(ev, args.get(1, "out_channels"), 1, None)
        geometry = _geometry(ev, args, _CONV_POSITIONS, CONV_LAYERS[name], False)
        if channels[0] is None or channels[1] is None or geometry is None:
            return None
        return channels[0] + channels[1] + geometry
    if name in POOL_LAYERS:
        positions = _MAX_POOL_POSITIONS if name.startswith("Max") else _AVG_POOL_POSITIONS
        indices = args.get(4, "return_indices") if name.startswith("Max") else None
        if indices is not None and ev.fact(indices).value is not False:
            return None  # the layer returns a (values, indices) pair
        return _geometry(ev, args, positions, POOL_LAYERS[name], True)
    return None


def _spatial(sizes: tuple[Dim, ...], geometry: tuple[int, ...], n: int) -> Optional[tuple[int, ...]]:
    """The output sizes of ``n`` spatial dims, or ``None`` (an unknown size, or no output)."""
    kernel, stride, padding, dilation = (geometry[i * n:(i + 1) * n] for i in range(4))
    ceil = len(geometry) > 4 * n and geometry[4 * n] == 1
    out = []
    for size, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        if not isinstance(size, int) or s <= 0:
            return None
        span = size + 2 * p - d * (k - 1) - 1
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= size + p:
            o -= 1  # the last window would start in the right padding
        if span < 0 or o <= 0:
            return None
        out.append(o)
    return tuple(out)


def windowed_shape(shape: Optional[Shape], geometry: tuple[Dim, ...], n: int,
                   out_channels: Optional[int]) -> Optional[Shape]:
    """The output shape of a convolution (``out_channels`` set) or a pooling with ``n`` spatial
    dims on an input of ``shape`` (batched or not), or ``None`` when a size is not known."""
    if shape is None or shape.rest_at is not None or len(shape.dims) not in (n + 1, n + 2):
        return None
    if not all(isinstance(g, int) for g in geometry):
        return None
    ints = tuple(g for g in geometry if isinstance(g, int))
    spatial = _spatial(shape.dims[-n:], ints, n)
    if spatial is None:
        return None
    lead = list(shape.dims[:-n])
    if out_channels is not None:
        lead[-1] = out_channels
    return Shape(tuple(lead) + spatial)


def module_output(qual: str, features: Optional[tuple[Dim, ...]], shape: Optional[Shape]) -> Optional[Shape]:
    """``layer(x)`` for a convolution or pooling module whose ``features`` hold its geometry."""
    name = qual.rsplit(".", 1)[-1]
    if features is None or not qual.startswith("torch.nn."):
        return None
    if name in CONV_LAYERS:
        out = features[1]
        return windowed_shape(shape, features[2:], CONV_LAYERS[name], out) if isinstance(out, int) else None
    if name in POOL_LAYERS:
        return windowed_shape(shape, features, POOL_LAYERS[name], None)
    return None


def input_channels(qual: Optional[str], features: Optional[tuple[Dim, ...]]) -> Optional[tuple[int, int]]:
    """``(in_channels, spatial dims)`` of an ``nn`` convolution module whose geometry is known."""
    name = (qual or "").rsplit(".", 1)[-1]
    if features is None or not (qual or "").startswith("torch.nn.") or name not in CONV_LAYERS:
        return None
    fin = features[0]
    return (fin, CONV_LAYERS[name]) if isinstance(fin, int) else None


def function_output(ev: Eval, name: str, args: CallArgs, shape: Optional[Shape]) -> Optional[Shape]:
    """``F.<name>(x, ...)`` for a pooling function with known geometry and input sizes."""
    n = POOL_FUNCTIONS.get(name)
    if n is None or len(args.pos) > 6:
        return None
    # F.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices);
    # F.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, ...): one more than the layer
    base = _MAX_POOL_POSITIONS if name.startswith("max") else _AVG_POOL_POSITIONS
    positions = {k: v + 1 for k, v in base.items()}
    if name.startswith("max"):
        positions["ceil_mode"] = 5  # the functional form puts ceil_mode before return_indices
    geometry = _geometry(ev, args, positions, n, True)
    if geometry is None:
        return None
    return windowed_shape(shape, geometry, n, None)


#: ``F`` convolutions, by their number of spatial dims
CONV_FUNCTIONS = {"conv1d": 1, "conv2d": 2, "conv3d": 3}


def conv_function_output(ev: Eval, name: str, args: CallArgs, shape: Optional[Shape]) -> Optional[Shape]:
    """``F.conv<n>d(x, weight, bias, stride, padding, dilation, groups)`` on an input of
    ``shape`` (batched or not): the weight's first dim as the channels, and the spatial sizes
    when the kernel (the weight's last dims) and the geometry are known ints; ``None`` when
    ``name`` is no convolution or the ranks are not known."""
    n = CONV_FUNCTIONS.get(name)
    weight = args.get(1, "weight")
    if n is None or weight is None or args.starred or shape is None or shape.rest_at is not None \
            or len(shape.dims) not in (n + 1, n + 2):
        return None
    w = ev.fact(weight).shape
    if w is None or w.rest_at is not None or len(w.dims) != n + 2:
        return None
    lead = list(shape.dims[:-n])
    lead[-1] = w.dims[0]
    spatial: tuple[Dim, ...] = (None,) * n
    kernel = tuple(k for k in w.dims[2:] if type(k) is int)
    rest = [_ints(ev, args.get(i, word), n, default) for i, word, default in
            ((3, "stride", 1), (4, "padding", 0), (5, "dilation", 1))]
    if len(kernel) == n and all(r is not None for r in rest):
        found = windowed_shape(shape, kernel + tuple(v for r in rest if r is not None for v in r), n, None)
        if found is not None:
            spatial = found.dims[-n:]
    return Shape(tuple(lead) + spatial)
