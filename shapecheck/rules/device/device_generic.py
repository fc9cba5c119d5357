"""Parameters that a function treats as tensors of any device: it places other tensors by them.

``def normalize_batch(batch): std = batch.new_tensor([...])`` makes ``std`` on ``batch``'s device:
the function is written for a ``batch`` on any device, a GPU included. A plain function is
otherwise no evidence of that (it may be a CPU-only script's); this one is.

A parameter counts when the body reads ``p.device``, calls ``p.new_zeros(...)`` and the other
``new_*`` methods, or gives ``p`` to a ``torch.*_like`` factory.
"""

from __future__ import annotations

from typing import Optional, cast

import libcst as cst

from shapecheck.rules.helpers.calls import torch_name
from shapecheck.semantic.syntax import all_params
from shapecheck.semantic.torch_api import LIKE_FACTORIES, NEW_TENSOR_METHODS
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo


def placing_params(ctx, function: cst.FunctionDef) -> frozenset[str]:
    """The parameters of ``function`` by which its body places other tensors (see the module)."""
    cached = _PLACING.get(function)
    if cached is not None:
        return cached
    params = plain_params(function)
    found = {name for node in walk(function.body) if (name := placing_param(ctx, node, params)) is not None}
    return _PLACING.put(function, frozenset(found))


def remembered_placing(function: cst.FunctionDef) -> Optional[frozenset[str]]:
    """What :func:`placing_params` holds for ``function``, if it does."""
    return _PLACING.get(function)


def remember_placing(function: cst.FunctionDef, placing: frozenset[str]) -> frozenset[str]:
    """Hold ``placing`` as :func:`placing_params`' answer for ``function`` (read in a shared walk)."""
    return _PLACING.put(function, placing)


def plain_params(function: cst.FunctionDef) -> set[str]:
    """The names of the parameters of ``function`` that are not ``*args``/``**kwargs``."""
    return {p.name.value for p in all_params(function.params) if not p.star}


def placing_param(ctx, node: cst.CSTNode, params: set[str]) -> Optional[str]:
    """The parameter among ``params`` by which ``node`` places a tensor (``p.device``,
    ``p.new_zeros(...)``, ``torch.zeros_like(p)``), if it does."""
    tp = type(node)
    if tp is cst.Attribute and type(node.value) is cst.Name and node.value.value in params:  # type: ignore[attr-defined]
        if node.attr.value == "device" or node.attr.value in NEW_TENSOR_METHODS:  # type: ignore[attr-defined]
            return node.value.value  # type: ignore[attr-defined]
    elif tp is cst.Call:
        call = cast(cst.Call, node)
        if call.args and type(first := call.args[0].value) is cst.Name and first.value in params \
                and not call.args[0].keyword and (torch_name(ctx, call.func) or "") in LIKE_FACTORIES:
            return first.value
    return None


#: the placing parameters of each function
_PLACING: NodeMemo[frozenset[str]] = NodeMemo()
