"""Tensor factories: ``torch.zeros``/``ones``/``full``/``arange``/``tensor``/``*_like``... and the
``Tensor.new_*`` methods, and the sizes a factory call asks for (read by the rules)."""

from __future__ import annotations

import math
from typing import Optional

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.arguments import dtype_value, literal_shape, py_dtype, size_args
from shapecheck.semantic.eval.autograd import requested_grad
from shapecheck.semantic.eval.devices import device_kw
from shapecheck.semantic.eval.layout import like_layout
from shapecheck.semantic.eval.registry import Eval, method
from shapecheck.semantic.facts import CPU, INT, NO_GRAD, SIZE, TENSOR, UNKNOWN, DeviceValue, DtypeKind, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import (
    FACTORY_SIZE_PARAMETERS, LIKE_FACTORIES, NEW_TENSOR_METHODS, SIZE_ARGUMENT_FACTORIES, SIZED_NEW_TENSOR_METHODS,
)
from shapecheck.shapes import Dim, Shape


def factory(ev: Eval, name: str, args: CallArgs) -> Fact:
    """``torch.<name>(...)`` for a factory of :data:`~shapecheck.semantic.torch_api.ALL_FACTORIES`."""
    dtype = None
    if "dtype" in args.kw:
        dtype = dtype_value(ev, args.kw["dtype"])
    device: Optional[DeviceValue] = device_kw(ev, args)
    if "device" not in args.kw:
        device = None if ev.model.default_device_set else CPU
    grad = requested_grad(ev, args.kw.get("requires_grad"), NO_GRAD)
    shape: Optional[Shape] = None
    default_dtype: Optional[DtypeKind] = DtypeKind.FLOAT
    like = None
    if args.starred:
        return Fact(kind=TENSOR, device=device, grad=grad, dtype_kind=dtype)
    if name in LIKE_FACTORIES:
        like = ev.fact(args.pos[0]) if args.pos else UNKNOWN
        shape = like.shape
        if "device" not in args.kw:
            device = like.device
        if dtype is None and "dtype" not in args.kw:
            dtype = like.dtype_kind
    elif name in SIZE_ARGUMENT_FACTORIES:
        shape = size_args(ev, args.pos, args.kw.get("size"))
    elif name == "full":
        size = args.get(0, "size")
        shape = size_args(ev, [size], None) if size is not None else None
        fill = args.get(1, "fill_value")
        if dtype is None and fill is not None and "dtype" not in args.kw:
            dtype = py_dtype(ev.fact(fill)) or None
            default_dtype = None
    elif name == "randint":
        size = args.kw.get("size")
        if size is None and args.pos:
            size = args.pos[-1]
        shape = size_args(ev, [size], None) if size is not None else None
        default_dtype = DtypeKind.INT
    elif name == "arange":
        shape, default_dtype = _arange(ev, args)
    elif name in ("linspace", "logspace"):
        steps = args.get(2, "steps")
        shape = Shape((ev.fact(steps).dim,)) if steps is not None else None
    elif name == "eye":
        n = args.get(0, "n")
        m = args.get(1, "m")
        dn = ev.fact(n).dim if n is not None else None
        dm = ev.fact(m).dim if m is not None else dn
        shape = Shape((dn, dm))
    elif name in ("tensor", "as_tensor", "scalar_tensor"):
        data = args.get(0, "data")
        if name == "scalar_tensor":
            shape, default_dtype = Shape(()), DtypeKind.FLOAT
        elif data is not None:
            shape, default_dtype = literal_shape(ev, data)
            if shape is None and isinstance(data, (cst.List, cst.Tuple)) and data.elements \
                    and not any(type(e) is cst.StarredElement for e in data.elements):
                shape = Shape((len(data.elements),), rest_at=1)  # `[ids]`: one row or more dims
            elif shape is None:
                shape, default_dtype = _flat_data(ev, data, default_dtype)
        if name in ("as_tensor", "tensor") and "device" not in args.kw and data is not None:
            df = ev.fact(data)
            if df.kind == TENSOR:  # `torch.tensor(t)` copies `t` on its own device
                device = df.device
    elif name == "randperm":
        n = args.get(0, "n")
        shape = Shape((ev.fact(n).dim,)) if n is not None else None
        default_dtype = DtypeKind.INT
    elif name == "from_numpy":
        device, default_dtype = CPU, None
    else:
        default_dtype = None
    if dtype is None and "dtype" not in args.kw:  # a `dtype=` whose value is not known leaves it unknown
        dtype = default_dtype
    out = O.plain_tensor(shape, device=device, grad=grad, dtype_kind=dtype,
                         is_scalar_cpu=shape is not None and shape.rank == 0 and device == CPU)
    if like is not None and like.kind == TENSOR:
        out = like_layout(out, like, shape)
    return out


def _flat_data(ev: Eval, data: cst.BaseExpression,
               dtype: Optional[DtypeKind]) -> tuple[Optional[Shape], Optional[DtypeKind]]:
    """The shape and dtype of ``torch.tensor(data)`` for data that is always one row of ints:
    a size (``torch.tensor(x.shape)``: one int per dim of ``x``), ``bytes``/``bytearray`` of
    something; ``(None, dtype)`` for other data."""
    if type(data) is cst.Call and type(data.func) is cst.Name and data.func.value in ("bytes", "bytearray") \
            and ev.model.imports.resolve(data.func) is None and data.func.value not in ev.model.env:
        return Shape((None,)), DtypeKind.INT
    f = ev.fact(data)
    if f.kind == SIZE:
        sizes = f.shape
        return Shape((len(sizes.dims) if sizes is not None and sizes.rest_at is None else None,)), DtypeKind.INT
    return None, dtype


def legacy_tensor(ev: Eval, name: str, args: CallArgs) -> Optional[Fact]:
    """``torch.Tensor([3.0])``, ``torch.LongTensor([[1], [2]])``, ``torch.FloatTensor(2, 3)``: a
    CPU tensor of the class's dtype, from a list or tuple display or from int sizes; ``None``
    for anything else (a tensor, an array, keywords)."""
    if args.kw or args.starred:
        return None
    dtype = DtypeKind.INT if name == "LongTensor" else DtypeKind.FLOAT
    shape: Optional[Shape]
    if len(args.pos) == 1 and isinstance(args.pos[0], (cst.List, cst.Tuple)):
        shape, _ = literal_shape(ev, args.pos[0])
        if shape is None or shape.rank == 0:
            return None
    elif args.pos and all(ev.fact(a).kind == INT for a in args.pos):
        shape = size_args(ev, args.pos, None)
    else:
        return None
    device = None if ev.model.default_device_set else CPU
    return O.plain_tensor(shape, device=device, grad=NO_GRAD, dtype_kind=dtype)


def _arange(ev: Eval, args: CallArgs) -> tuple[Optional[Shape], Optional[DtypeKind]]:
    vals = [ev.fact(a) for a in args.pos[:3]]
    for key in ("start", "end", "step"):
        if key in args.kw:
            return None, None
    nums = [v.value for v in vals]
    if not vals:
        return None, None
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in nums):
        kinds = [v.kind for v in vals]
        end = vals[0].dim if len(vals) == 1 and isinstance(vals[0].dim, str) else None  # arange(T): T values
        return Shape((end,)), (DtypeKind.INT if all(k == INT for k in kinds) else None)
    is_int = all(isinstance(v, int) for v in nums)
    if len(nums) == 1:
        start, end, step = 0, nums[0], 1
    elif len(nums) == 2:
        start, end, step = nums[0], nums[1], 1
    else:
        start, end, step = nums
    if step == 0:
        return None, None
    n = max(0, math.ceil((end - start) / step))
    return Shape((n,)), (DtypeKind.INT if is_int else DtypeKind.FLOAT)


@method(*NEW_TENSOR_METHODS)
def new_factory(ev: Eval, x: Fact, name: str, args: CallArgs) -> Optional[Fact]:
    """new_zeros/new_ones/new_empty/new_full/new_tensor: device and dtype of the receiver."""
    dtype: Optional[DtypeKind]
    if name == "new_tensor":
        shape, dtype = literal_shape(ev, args.pos[0]) if args.pos else (None, None)
    elif name == "new_full":
        size = args.get(0, "size")
        shape = size_args(ev, [size], None) if size is not None else None
        dtype = x.dtype_kind
    else:
        shape = size_args(ev, args.pos, args.kw.get("size"))
        dtype = x.dtype_kind
    if "dtype" in args.kw:
        dtype = dtype_value(ev, args.kw["dtype"])
    device = x.device if "device" not in args.kw else device_kw(ev, args)
    grad = requested_grad(ev, args.kw.get("requires_grad"), NO_GRAD)
    return O.plain_tensor(shape, device=device, grad=grad, dtype_kind=dtype,
                          is_scalar_cpu=shape is not None and shape.rank == 0 and device == CPU)


def factory_sizes(ev: Eval, call: cst.Call) -> Optional[tuple[str, list[Dim]]]:
    """For a call of a tensor factory that takes sizes (``torch.zeros``, ``x.new_zeros``,
    ``torch.eye``, ``torch.linspace``...): its name and the sizes it asks for as written
    (negative ones kept, unknown ones ``None``; ``[n, m]`` for ``eye``, ``[steps]`` for
    ``linspace``); ``None`` for any other call or when the sizes cannot be read."""
    args = CallArgs(call)
    if args.starred:
        return None
    func = call.func
    qual = ev.model.imports.resolve(func)
    name = qual[6:] if qual is not None and qual.startswith("torch.") else None
    size: Optional[cst.BaseExpression] = None
    if name in SIZE_ARGUMENT_FACTORIES:
        shape = size_args(ev, args.pos, args.kw.get("size"))
        return (name, list(shape.dims)) if shape is not None and shape.rank is not None else None
    if name in ("full", "empty_strided"):
        size = args.get(0, "size")
    elif name == "randint":
        size = args.kw.get("size")
        if size is None and len(args.pos) >= 2 and isinstance(args.pos[-1], (cst.Tuple, cst.List)):
            size = args.pos[-1]
    elif name is not None and name in FACTORY_SIZE_PARAMETERS:
        dims: list[Dim] = []
        for index, keyword in FACTORY_SIZE_PARAMETERS[name]:
            arg = args.get(index, keyword)
            dims.append(ev.fact(arg).dim if arg is not None else None)
        return name, dims
    elif type(func) is cst.Attribute and func.attr.value in SIZED_NEW_TENSOR_METHODS and name is None:
        if ev.fact(func.value).kind not in (TENSOR, None):
            return None
        name = func.attr.value
        if name != "new_full":
            shape = size_args(ev, args.pos, args.kw.get("size"))
            return (name, list(shape.dims)) if shape is not None and shape.rank is not None else None
        size = args.get(0, "size")
    else:
        return None
    if size is None:
        return None
    shape = size_args(ev, [size], None)
    return (name, list(shape.dims)) if shape is not None and shape.rank is not None else None
