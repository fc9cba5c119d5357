"""What a use of ``t.data`` does, and whether a graph can be waiting on ``t`` there.

Shared by SC303 (a change through ``.data`` where a graph that saved the tensor is still to be
back-propagated: a silently wrong gradient; a read that cuts a loss off the graph it is
back-propagated through) and SC310 (every other ``.data`` on a tensor that requires grad: the
legacy idiom, with its replacement).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.loss_calls import loss_prediction
from shapecheck.rules.autograd.parameters import parameter_by_loop
from shapecheck.rules.autograd.pending_graph import feeds_backward, feeds_return, inside_pending_graph, loop_owner
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.semantic.facts import Grad
from shapecheck.semantic.syntax import is_name
from shapecheck.semantic.torch_api import LAYER_PARAMETER_NAMES, TENSOR_METADATA_ATTRIBUTES, TENSOR_METADATA_METHODS
from shapecheck.semantic.walk import walk

#: the reads of `.data` the rules let pass as copies, with the `.detach()` fix: their choice,
#: not a table of torch
DETACH_SAFE = frozenset({"numpy", "cpu", "clone", "tolist", "item"})
_METADATA = TENSOR_METADATA_ATTRIBUTES | TENSOR_METADATA_METHODS
#: methods and torch functions that take only the dtype, device (and shape) of a tensor to make
#: a new one: ``w.data.new_zeros(n)``, ``torch.zeros_like(w.data)``
_NEW_FROM = frozenset({"new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                   "randint_like"})
#: a storage's methods that read where it is, not what it holds
_STORAGE_ADDRESS = frozenset({"data_ptr", "nbytes", "size", "device"})


def is_data_attr(expr: cst.BaseExpression) -> bool:
    """``expr`` is ``<something>.data``."""
    return type(expr) is cst.Attribute and expr.attr.value == "data"


def _swaps_storage(statement: Optional[cst.CSTNode]) -> bool:
    """True for ``x.data = ...`` (also ``x.data, meta = ...``): the statement replaces a
    tensor's storage."""
    if type(statement) is not cst.Assign:
        return False
    for target in statement.targets:
        elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else ()
        if is_data_attr(target.target) or any(is_data_attr(e.value) for e in elements):
            return True
    return False


def harmless_use(node: cst.Attribute, ctx) -> bool:
    """``t.data`` (the node whose hook runs) is used in a way with no plain replacement or that
    touches no values: metadata (``w.data.shape``, its storage's address), a new tensor of its
    dtype and device (``w.data.new_zeros(n)``, ``torch.zeros_like(w.data)``), a storage swap
    (``w.data = new``), a type check, or an argument of a function of the run that only reads it."""
    parent = ctx.parent
    ancestors = ctx.ancestors
    if type(parent) is cst.Attribute and parent.value is node:
        if parent.attr.value in _METADATA:
            return True
        if parent.attr.value in _NEW_FROM and len(ancestors) >= 2 and type(ancestors[-2]) is cst.Call:
            return True
        if parent.attr.value in ("untyped_storage", "storage") and len(ancestors) >= 3 \
                and type(ancestors[-2]) is cst.Call and type(ancestors[-3]) is cst.Attribute \
                and ancestors[-3].attr.value in _STORAGE_ADDRESS:
            return True  # `p.data.untyped_storage().data_ptr()`
    if type(parent) is cst.AssignTarget or _swaps_storage(ctx.statement):
        return True
    if len(ancestors) >= 2 and type(parent) is cst.Arg and type(ancestors[-2]) is cst.Call:
        call = ancestors[-2]
        if dotted_name(call.func) in ("isinstance", "type"):
            return True
        qual = ctx.qualname(call.func) or ""
        if call.args and call.args[0] is parent and parent.keyword is None \
                and qual.startswith("torch.") and qual.split(".")[-1] in _LIKE:
            return True  # `torch.zeros_like(w.data)`
        if ctx.only_reads(call, node):
            return True
    return False


def changes_values(node: cst.Attribute, ctx) -> bool:
    """``t.data`` (the node whose hook runs) is written through: an in-place method on it or on
    an indexed part of it (``w.data.mul_(2)``, ``w.data[0].fill_(1)``), an assignment or
    augmented assignment to a part (``w.data[i] = v``, ``w.data += d``), the first argument of
    a torch in-place function (``nn.init.zeros_(w.data)``) or an ``out=`` argument."""
    chain: list[cst.CSTNode] = [node]
    ancestors = ctx.ancestors
    i = len(ancestors) - 1
    while i >= 0 and type(ancestors[i]) is cst.Subscript and ancestors[i].value is chain[-1]:
        chain.append(ancestors[i])
        i -= 1
    top = chain[-1]
    holder = ancestors[i] if i >= 0 else None
    statement = ctx.statement
    if type(statement) is cst.AugAssign and statement.target is top:
        return True
    if type(holder) is cst.AssignTarget and holder.target is top:
        return True
    if type(holder) is cst.Attribute and holder.value is top and holder.attr.value.endswith("_") \
            and not holder.attr.value.startswith("__") and i >= 1 and type(ancestors[i - 1]) is cst.Call \
            and ancestors[i - 1].func is holder:
        return True
    if type(holder) is cst.Arg and i >= 1 and type(ancestors[i - 1]) is cst.Call:
        call = ancestors[i - 1]
        if holder.keyword is not None:
            return holder.keyword.value == "out"
        qual = ctx.qualname(call.func) or ""
        return qual.startswith("torch.") and qual.endswith("_") and call.args[0] is holder
    return False


def requires_grad_evidence(expr: cst.BaseExpression, ctx) -> bool:
    """``expr`` (the tensor before ``.data``) requires grad: by its facts, as the variable of a
    loop over ``.parameters()``, or as a ``.weight``/``.bias`` that the enclosing class does not
    register as a buffer. A gradient (``p.grad``) does not require grad itself."""
    if type(expr) is cst.Attribute and expr.attr.value == "grad":
        return False
    if registered_buffer(expr, ctx):
        return False
    grad = ctx.fact(expr).requires_grad
    if grad is not None:
        return grad
    if type(expr) is cst.Attribute and expr.attr.value in LAYER_PARAMETER_NAMES:
        return True
    return parameter_by_loop(expr, ctx)


def registered_buffer(expr: cst.BaseExpression, ctx) -> bool:
    """``expr`` is ``self.<name>`` and the enclosing class calls ``self.register_buffer("<name>",
    ...)``: a buffer does not require grad, whatever it is called (``weight`` in a frozen batch
    norm)."""
    class_def = ctx.class_def
    if class_def is None or type(expr) is not cst.Attribute or not is_name(expr.value, "self"):
        return False
    for node in walk(class_def, into_defs=True):
        if type(node) is cst.Call and type(node.func) is cst.Attribute \
                and node.func.attr.value == "register_buffer" and is_name(node.func.value, "self") \
                and node.args and type(node.args[0].value) is cst.SimpleString \
                and node.args[0].value.evaluated_value == expr.attr.value:
            return True
    return False


def graph_waiting(node: cst.Attribute, ctx, cache: dict) -> Optional[str]:
    """Where a graph that saved the tensor ``node.value`` can still be waiting for its backward
    pass at this statement: ``"forward"`` inside ``forward`` of a module, ``"pending"`` between
    a use of the tensor (or of its module) that a loss depends on and that loss's
    ``backward()``; ``None`` elsewhere."""
    tensor = node.value
    if ctx.in_forward:
        return None if _made_here(tensor, ctx) else "forward"
    owner = None
    if type(tensor) is cst.Name:
        owner = loop_owner(ctx, tensor.value)
    if owner is None:
        owner = dotted_name(tensor)
    if owner is not None and inside_pending_graph(ctx, owner, cache):
        return "pending"
    return None


def cut_from_loss(node: cst.Attribute, ctx, cache: dict) -> Optional[str]:
    """Where reading ``t.data`` (the node whose hook runs) cuts ``t`` off a graph that a
    ``backward()`` of the function is about to run: ``"loss"`` when it is the prediction a loss
    is computed on (``criterion(out.data, y)``), ``"feeds"`` when ``t`` is a result of the graph
    (not a leaf) and the statement computes a value that a later ``backward()`` starts from, or,
    inside ``forward``, a value that ``forward`` returns; ``None`` elsewhere."""
    ancestors = ctx.ancestors
    if len(ancestors) >= 2 and type(ctx.parent) is cst.Arg and type(ancestors[-2]) is cst.Call \
            and loss_prediction(ctx, ancestors[-2]) is node:
        found = "loss"
    elif ctx.fact(node.value).grad == Grad.NON_LEAF:
        found = "feeds"
    else:
        return None
    if found == "feeds" and ctx.in_forward and feeds_return(ctx, cache):
        return found
    return found if feeds_backward(ctx, cache) else None


def _made_here(tensor: cst.BaseExpression, ctx) -> bool:
    """``tensor`` is reached from a local name that every assignment of the function binds to a
    call's result (``new = nn.Embedding(n, d)`` for ``new.weight``): made by this call, so no
    earlier call's graph can hold it."""
    root = tensor
    while type(root) is cst.Attribute:
        root = root.value
    function = ctx.function
    if type(root) is not cst.Name or function is None:
        return False
    values = [node.value for node in walk(function.body) if type(node) is cst.Assign
              and any(type(t.target) is cst.Name and t.target.value == root.value for t in node.targets)]
    return bool(values) and all(type(v) is cst.Call for v in values)
