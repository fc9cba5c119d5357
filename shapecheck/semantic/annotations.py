"""Facts promised by annotations: jaxtyping (``Float[Tensor, "b c"]``) and ``torch.Tensor``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import TENSOR, DtypeKind, Fact

# jaxtyping's dtype annotations and their kinds: not a table of torch
_F, _I, _B, _C = DtypeKind.FLOAT, DtypeKind.INT, DtypeKind.BOOL, DtypeKind.COMPLEX
_JAX_DTYPES: dict[str, Optional[DtypeKind]] = {
    "Float": _F, "Float16": _F, "Float32": _F, "Float64": _F,
    "BFloat16": _F, "Inexact": None, "Int": _I, "Int8": _I, "Int16": _I,
    "Int32": _I, "Int64": _I, "Integer": _I, "UInt": _I, "UInt8": _I,
    "Bool": _B, "Complex": _C, "Complex64": _C, "Complex128": _C,
    "Shaped": None, "Num": None, "Real": None,
}


def annotation_fact(annotation: Optional[cst.BaseExpression], imports) -> Optional[Fact]:
    """The tensor fact an annotation promises: the shape and dtype kind of a jaxtyping annotation
    (``Float[Tensor, "b c"]``), just the kind for ``torch.Tensor``; else ``None``."""
    if type(annotation) is not cst.Subscript:
        if annotation is not None and imports.resolve(annotation) in ("torch.Tensor", "torch.nn.Parameter"):
            return Fact(kind=TENSOR)
        return None
    from shapecheck.errors import ShapeCheckError
    from shapecheck.shapes import dims_to_shape, parse_dims

    if len(annotation.slice) != 2:
        return None
    qual = imports.resolve(annotation.value)
    if qual is None or not qual.startswith("jaxtyping."):
        return None
    name = qual.split(".")[-1]
    if name not in _JAX_DTYPES:
        return None
    spec = annotation.slice[1].slice
    if type(spec) is not cst.Index or type(spec.value) is not cst.SimpleString:
        return None
    try:
        text = spec.value.evaluated_value
        if not isinstance(text, str):
            return None
        shape = dims_to_shape(parse_dims(text))
    except (ShapeCheckError, ValueError):
        return None
    return Fact(kind=TENSOR, shape=shape, dtype_kind=_JAX_DTYPES[name])
