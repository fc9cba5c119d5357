"""Which module's parameters an optimizer updates, so that a ``zero_grad()`` can be matched to
the optimizers whose gradients it clears.

``optimizerG = optim.Adam(netG.parameters())``: ``optimizerG.zero_grad()`` and
``netG.zero_grad()`` both clear what ``optimizerG.step()`` applies; ``netD.zero_grad()`` does
not. Only constructions written that way are read (the optimizer bound in the current scope,
or at module level for a name the function does not bind); anything else is unknown.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.global_values import global_values
from shapecheck.rules.helpers.calls import dotted_name, keyword, method_call, positional, torch_name


def optimizer_params(ctx, value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The ``params`` of an optimizer construction ``optim.<X>(params, ...)``, else ``None``."""
    if type(value) is not cst.Call:
        return None
    name = torch_name(ctx, value.func)
    if name is None or not name.startswith("optim.") or not name[6:7].isupper():
        return None
    args = positional(value)
    given = keyword(value, "params")
    return args[0] if args else given.value if given is not None else None


def _params_owner(ctx, value: cst.BaseExpression) -> Optional[str]:
    """The module ``M`` of ``optim.<X>(M.parameters(), ...)``, else ``None``."""
    params = optimizer_params(ctx, value)
    if type(params) is not cst.Call or params.args:
        return None
    call = method_call(params)
    if call is None or call[1] != "parameters":
        return None
    return dotted_name(call[0])


def params_owner(ctx, optimizer: cst.BaseExpression) -> Optional[str]:
    """The dotted name of the module whose ``parameters()`` the optimizer ``optimizer`` was
    built from, when every binding that reaches here says the same; else ``None``."""
    dotted = dotted_name(optimizer)
    if dotted is None:
        return None
    values = ctx.assigned_values(dotted) or global_values(ctx, optimizer)
    owners = {_params_owner(ctx, v) for v in values}
    if len(owners) != 1:
        return None
    return owners.pop()


def overlap(one: str, other: str) -> bool:
    """The modules named ``one`` and ``other`` may share parameters: the same name, or one holds
    the other as a submodule (``model`` and ``model.encoder``)."""
    return one == other or one.startswith(other + ".") or other.startswith(one + ".")
