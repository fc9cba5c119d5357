"""``nn.Sequential`` of ``nn.Linear`` layers and layers that keep their input's shape
(``nn.Sequential(nn.Linear(d, hidden), nn.ReLU())``): on its input it acts as one ``nn.Linear``
from the features the first Linear layer takes to those the last one gives."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import MODULE
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import NN_SHAPE_KEEPING_MODULES
from shapecheck.shapes import Dim


def chain_features(ev: Eval, args: CallArgs) -> Optional[tuple[Dim, Dim]]:
    """``(in_features, out_features)`` of ``nn.Sequential(args)`` when its layers, given one by
    one, are ``nn.Linear`` layers (at least one, the features of each known or not) and layers
    that keep the shape of their input; else ``None``."""
    if args.starred or args.kw or not args.pos:
        return None
    first: Optional[tuple[Dim, Dim]] = None
    last: Optional[tuple[Dim, Dim]] = None
    for layer in args.pos:
        if type(layer) is not cst.Call:
            return None
        f = ev.fact(layer)
        if f.kind != MODULE or f.qual is None or not f.qual.startswith("torch.nn."):
            return None
        name = f.qual[len("torch.nn."):]
        if name == "Linear":
            if f.features is None:
                return None
            first = first or f.features
            last = f.features
        elif name not in NN_SHAPE_KEEPING_MODULES:
            return None
    if first is None or last is None:
        return None
    return first[0], last[1]
