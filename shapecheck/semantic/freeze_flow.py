"""When freezing (``p.requires_grad = False``) can have happened: a layer built in a function is
new, and its parameters require grad until a statement that may freeze them runs.

A file that freezes parameters somewhere (``model.params_frozen``) leaves the grad of module
parameters unknown wherever the freeze may already have run: at module level, in the modules of
its classes seen from other methods, in what callees return. Inside one function the order is
known: ``nn.Embedding(...)`` built there holds parameters that require grad, up to the first
statement that may freeze them. That is a statement that turns ``requires_grad`` off itself, or
that calls something other than torch, a builtin, a layer, a method of a tensor or a method of a
module known to leave ``requires_grad`` alone (``self.freeze_backbone()``, ``model.apply(fn)``,
``freeze(model)`` may freeze). After it, every module of the scope has unknown grad again.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, MODULE, TENSOR, Fact
from shapecheck.semantic.walk import walk

#: text that turns ``requires_grad`` off somewhere in a file
FREEZES = re.compile(r"\.requires_grad_\((?!\s*\)|\s*True\s*\))|\.requires_grad\s*=(?!=)(?!\s*True\b)")

#: builtins that cannot reach a module's parameters (``setattr`` can: it is not here)
_PLAIN_BUILTINS = frozenset({
    "print", "len", "range", "isinstance", "issubclass", "hasattr", "getattr", "int", "float", "str", "bool",
    "list", "tuple", "dict", "set", "frozenset", "zip", "enumerate", "min", "max", "sum", "abs", "round",
    "sorted", "reversed", "super", "type", "format", "repr", "any", "all", "iter", "next", "divmod",
    "pow", "id", "hash", "callable", "slice",
})
#: methods of ``nn.Module`` that leave ``requires_grad`` of its parameters as it is
_MODULE_METHODS = frozenset({
    "register_buffer", "register_parameter", "add_module", "register_module", "to", "cuda", "cpu",
    "float", "double", "half", "bfloat16", "train", "eval", "zero_grad", "parameters", "named_parameters",
    "buffers", "named_buffers", "modules", "named_modules", "children", "named_children", "state_dict",
    "__init__",
})
#: methods of lists, dicts and strings
_CONTAINER_METHODS = frozenset({
    "append", "extend", "insert", "pop", "items", "keys", "values", "get", "setdefault", "format", "join",
    "split", "strip", "replace", "startswith", "endswith", "lower", "upper",
})


def fresh_layers_here(model) -> bool:
    """A layer built now is known new: the walk is inside a function of the file (not at module
    level, whose names every function reads, nor in a callee re-analysed for a caller)."""
    if model.scopes.top.function is None:
        return False
    defs = model.callees
    return defs is None or not defs.active


def may_freeze(small: cst.CSTNode, fact: Callable[[cst.CSTNode], Fact],
               resolve: Callable[[cst.CSTNode], Optional[str]], local_names) -> bool:
    """``small`` (a small statement) may turn ``requires_grad`` off on a module's parameters
    (see the module docstring); ``local_names`` holds the names bound in the scope."""
    for node in (small, *walk(small)):
        tp = type(node)
        if tp is cst.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                target = t.target
                if type(target) is cst.Attribute and target.attr.value == "requires_grad" \
                        and not (type(node.value) is cst.Name and node.value.value == "True"):  # type: ignore[attr-defined]
                    return True
        elif tp is cst.Call and not _harmless(node, fact, resolve, local_names):  # type: ignore[arg-type]
            return True
    return False


def _harmless(call: cst.Call, fact, resolve, local_names) -> bool:
    """``call`` cannot turn ``requires_grad`` off."""
    func = call.func
    qual = resolve(func)
    if qual is not None:
        return qual.startswith("torch.") and not qual.endswith("requires_grad_")
    if type(func) is cst.Name and func.value not in local_names:
        return func.value in _PLAIN_BUILTINS
    if type(func) is cst.Attribute:
        method = func.attr.value
        if method == "requires_grad_":
            return False
        if method in _CONTAINER_METHODS:
            return True
        owner = fact(func.value)
        if owner.kind == TENSOR:
            return True
        if owner.kind == MODULE and method in _MODULE_METHODS:
            return True
        if type(func.value) is cst.Call and type(func.value.func) is cst.Name and func.value.func.value == "super":
            return method == "__init__"
    called = fact(func)
    return called.kind == MODULE and (called.qual or "").startswith("torch.nn.")


def forget_fresh_layers(env: dict[str, Fact]) -> None:
    """After a statement that may freeze: the modules of the scope (and the parameters bound by
    attribute paths, ``self.fc.weight``) no longer surely require grad."""
    for key, f in list(env.items()):
        if f.kind == MODULE and f.trainable is True:
            env[key] = f.with_(trainable=None)
        elif f.kind == TENSOR and f.grad == LEAF_REQUIRES_GRAD and "." in key:
            env[key] = f.with_(grad=None)
