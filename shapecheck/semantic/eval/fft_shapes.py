"""``torch.fft``: every transform keeps its input's rank; along the transformed dim (the last by
default) ``fft``/``ifft`` keep the size, ``rfft``/``ihfft`` give ``n // 2 + 1`` and
``irfft``/``hfft`` give ``2 * (n - 1)`` (or the ``n`` asked for)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic import shape_ops as O
from shapecheck.semantic.eval.autograd import grad_of
from shapecheck.semantic.facts import TENSOR, DtypeKind, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.eval.registry import Eval
from shapecheck.shapes import Dim, Shape

#: one-dimensional transforms: how the size along ``dim`` changes ("keep", "half", "double")
_ONE_DIM = {"fft": "keep", "ifft": "keep", "rfft": "half", "ihfft": "half", "irfft": "double", "hfft": "double"}
#: transforms of several dims (sizes along them not computed: only the rank is kept)
_MANY_DIMS = frozenset({"fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2",
                        "hfftn", "ihfftn", "fftshift", "ifftshift"})


def _new_size(size: Dim, how: str, n: Optional[int]) -> Dim:
    """The size along the transformed dim of a one-dimensional transform."""
    if n is not None:
        size = n
        if how == "double":
            return n
    if not isinstance(size, int):
        return None
    if how == "half":
        return size // 2 + 1
    if how == "double":
        return 2 * (size - 1)
    return size


def fft_call(ev: Eval, name: str, expr: cst.Call) -> Optional[Fact]:
    """``torch.fft.<name>(x, ...)``: a tensor of ``x``'s rank (and the sizes of the one-dim
    transforms when known); ``None`` for a function not handled."""
    args = CallArgs(expr)
    if name not in _ONE_DIM and name not in _MANY_DIMS or args.starred or not args.pos:
        return None
    x = ev.fact(args.pos[0])
    if x.kind not in (TENSOR, None) or x.elems is not None:
        return None
    shape = x.shape
    if shape is not None and name in _MANY_DIMS and name not in ("fftshift", "ifftshift"):
        shape = Shape((None,) * len(shape.dims), shape.rest_at, shape.rest_name)
    elif shape is not None and name in _ONE_DIM:
        dim_expr, n_expr = args.get(2, "dim"), args.get(1, "n")
        dim = ev.fact(dim_expr).value if dim_expr is not None else -1
        n = ev.fact(n_expr).value if n_expr is not None else None
        dims = list(shape.dims)
        known = shape.rest_at is None or (dim == -1 and shape.rest_at == 0) or (
            isinstance(dim, int) and 0 <= dim < shape.rest_at)
        if n_expr is not None and type(n) is not int:
            n = None
            known = False
        if type(dim) is int and known and -len(dims) <= dim < len(dims):
            dims[dim] = _new_size(dims[dim], _ONE_DIM[name], n)
        else:
            dims = [None] * len(dims)
        shape = Shape(tuple(dims), shape.rest_at, shape.rest_name)
    complex_out = name in ("fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn",
                           "ihfft2", "ihfftn")
    dtype = DtypeKind.COMPLEX if complex_out else DtypeKind.FLOAT if name not in ("fftshift", "ifftshift") \
        else x.dtype_kind
    return O.plain_tensor(shape, device=x.device, grad=grad_of(ev, [x], True), dtype_kind=dtype)
