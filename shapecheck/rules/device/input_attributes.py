"""Tensors that ``forward`` reads off an input object: ``tensor_list.mask``, ``batch.x``.

A module's ``forward`` often takes a container of tensors (DETR's ``NestedTensor``, a graph
batch) rather than a tensor. The tensors it holds live where the caller put the container, which
is where the module runs: as unknown a device as a tensor input's. An attribute of such an input
counts as an input tensor, unless it names tensor metadata (``x.shape``, ``x.device``) or a tensor
that torch always keeps on the CPU (``PackedSequence.batch_sizes``).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.semantic.torch_api import TENSOR_METADATA_ATTRIBUTES

__all__ = ["container_annotation", "input_attribute"]

#: attributes that are no tensor on the input's device: metadata, autograd flags, and
#: ``PackedSequence.batch_sizes`` (a CPU tensor whatever the device of the packed data)
_NOT_ON_INPUT_DEVICE = TENSOR_METADATA_ATTRIBUTES | frozenset({
    "is_leaf", "requires_grad", "grad_fn", "names", "is_sparse", "is_quantized", "is_meta", "batch_sizes",
})
#: annotations of values that hold no tensors as attributes
_PLAIN_TYPES = frozenset({
    "int", "float", "bool", "str", "bytes", "complex", "list", "tuple", "dict", "set", "None",
    "Optional", "Union", "List", "Tuple", "Dict", "Sequence", "Any", "Callable",
})


def container_annotation(param: cst.Param) -> bool:
    """True for a parameter annotated with a class name that is no builtin or ``typing`` type
    (``tensor_list: NestedTensor``): an object that may hold tensors as attributes."""
    if param.annotation is None:
        return False
    dotted = dotted_name(param.annotation.annotation)
    return dotted is not None and dotted.split(".")[-1] not in _PLAIN_TYPES and dotted.split(".")[-1] != "Tensor"


def input_attribute(expr: cst.Attribute, params: dict[str, cst.Param], receiver: Optional[str]) -> Optional[str]:
    """``tensor_list.mask`` when ``expr`` is an attribute of a parameter of ``forward`` (among
    ``params``, not its ``receiver``) that is unannotated or annotated with a container class,
    and the attribute may be a tensor on the input's device; else ``None``."""
    if type(expr.value) is not cst.Name or expr.attr.value in _NOT_ON_INPUT_DEVICE:
        return None
    name = expr.value.value
    param = params.get(name)
    if param is None or name == receiver or name in ("self", "cls"):
        return None
    if param.annotation is not None and not container_annotation(param):
        return None
    return f"{name}.{expr.attr.value}"
