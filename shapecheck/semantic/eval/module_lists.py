"""What a loop over a ``ModuleList`` of the module yields: ``for blk in self.blocks`` binds an
instance of the file's module class that ``__init__`` put in ``self.blocks``, and ``for attn, ff
in self.layers`` the pair of each ``ModuleList([Attention(...), FeedForward(...)])`` appended to it.

Only what every element agrees on is said: ``__init__`` builds ``self.<name>`` once, as
``nn.ModuleList(...)`` of a list display, a list comprehension or nothing, and fills it by
``self.<name>.append(...)``; each element is a call of a module class of the file (or a
``ModuleList`` display of such calls), all of the same class (or the same classes in the same order).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.eval.nn_modules import local_module
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import MODULE, Fact
from shapecheck.semantic.syntax import dotted_name, method_def, positional
from shapecheck.semantic.walk import walk

_MODULE_LIST = "torch.nn.ModuleList"


def module_list_element(ev: Eval, iter_expr: cst.BaseExpression) -> Optional[Fact]:
    """The fact of each element of ``self.<name>`` (a ``ModuleList`` that ``__init__`` of the
    enclosing class fills with instances of the file's module classes); ``None`` when unknown."""
    dotted = dotted_name(iter_expr)
    class_def = ev.model.class_def
    if dotted is None or not dotted.startswith("self.") or dotted.count(".") != 1 or class_def is None:
        return None
    init = method_def(class_def, "__init__")
    if init is None:
        return None
    shapes: list[Optional[tuple[str, ...]]] = []
    built = 0
    for node in walk(init.body):
        if type(node) is cst.Assign and any(dotted_name(t.target) == dotted for t in node.targets):
            built += 1
            shapes.extend(_built_with(ev, node.value))
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "append" \
                and dotted_name(node.func.value) == dotted and len(node.args) == 1:
            shapes.append(_element(ev, node.args[0].value))
    if built != 1 or not shapes or any(s is None for s in shapes) or len(set(shapes)) != 1:
        return None
    classes = shapes[0]
    assert classes is not None
    if len(classes) == 1 and not classes[0].startswith("["):
        return local_module(ev, classes[0])
    names = classes[0][1:].split(",")
    return Fact(kind=MODULE, qual=_MODULE_LIST, elems=tuple(local_module(ev, name) for name in names))


def _built_with(ev: Eval, value: cst.BaseExpression) -> list[Optional[tuple[str, ...]]]:
    """The elements ``nn.ModuleList(...)`` starts with (``[None]``: not such a call)."""
    if type(value) is not cst.Call or ev.model.imports.resolve(value.func) != _MODULE_LIST:
        return [None]
    args = positional(value)
    if not args:
        return []
    items = args[0]
    if type(items) is cst.List:
        return [_element(ev, e.value) for e in items.elements]
    if type(items) is cst.ListComp:
        return [_element(ev, items.elt)]
    return [None]


def _element(ev: Eval, value: cst.BaseExpression) -> Optional[tuple[str, ...]]:
    """``Cls(...)``: ``("Cls",)``; ``nn.ModuleList([A(...), B(...)])``: ``("[A,B",)``; else ``None``."""
    if type(value) is not cst.Call:
        return None
    if ev.model.imports.resolve(value.func) == _MODULE_LIST:
        args = positional(value)
        if len(args) != 1 or type(args[0]) is not cst.List:
            return None
        names = [_local_class(ev, e.value) for e in args[0].elements]
        if not names or any(n is None for n in names):
            return None
        return ("[" + ",".join(n for n in names if n is not None),)
    name = _local_class(ev, value)
    return (name,) if name is not None else None


def _local_class(ev: Eval, value: cst.BaseExpression) -> Optional[str]:
    """``Cls(...)`` for a module class ``Cls`` of this file: ``"Cls"``."""
    if type(value) is not cst.Call or type(value.func) is not cst.Name:
        return None
    name = value.func.value
    return name if ev.model.classes.get(name) is True else None
