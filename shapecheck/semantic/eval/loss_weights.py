"""``torch.nn`` losses built with a weight tensor (``nn.CrossEntropyLoss(weight=w)``,
``nn.BCEWithLogitsLoss(pos_weight=w)``): the loss registers it as a buffer, so the module is
where that tensor is until it is moved, and its input must be there too."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import BOOL, FLOAT, INT, STR, TENSOR, Fact
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import NN_LOSS_WEIGHTS


def loss_weights(ev: Eval, name: str, args: CallArgs) -> Optional[tuple[tuple[str, ...], Fact]]:
    """For ``nn.<name>(args)``, a loss given weight tensors and otherwise only plain values:
    the names of the buffers it holds and the fact of the first one, when its device is known
    and it is not 0-dim (a 0-dim CPU tensor mixes with tensors of any device); else ``None``."""
    slots = NN_LOSS_WEIGHTS.get(name)
    if slots is None or args.starred:
        return None
    given: dict[str, cst.BaseExpression] = {}
    for slot, position in slots.items():
        expr = args.get(position, slot)
        if expr is not None and not (type(expr) is cst.Name and expr.value == "None"):
            given[slot] = expr
    if not given:
        return None
    weights = set(given.values())
    for a in list(args.pos) + list(args.kw.values()):
        if a not in weights and not (ev.fact(a).kind in (INT, FLOAT, STR, BOOL)
                                     or (type(a) is cst.Name and a.value == "None")):
            return None
    facts = [ev.fact(e) for e in given.values()]
    first = facts[0]
    devices = {f.device for f in facts}
    if any(f.kind != TENSOR for f in facts) or len(devices) != 1 or first.device is None \
            or not isinstance(first.device, str):
        return None
    shape = first.shape
    if any(f.is_scalar_cpu for f in facts) or shape is None \
            or not (shape.rank >= 1 if shape.rank is not None else len(shape.dims) >= 1):
        return None
    return tuple(given), first
