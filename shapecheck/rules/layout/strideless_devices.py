"""Sides of an ``if`` that run only on a device whose tensors have no strides.

An XLA tensor (``x.device.type == "xla"``, the TPU path of fairseq-style attention) has no
strides: every layout is its own, and ``view`` never fails there for want of contiguity.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.shape.bound_values import value_before
from shapecheck.semantic.branch_facts import Branch

#: device types whose tensors carry no strides
_STRIDELESS = frozenset({"xla"})


def _device_type_test(test: cst.BaseExpression) -> Optional[bool]:
    """For ``<t>.device.type == "xla"`` (either order): True; for ``!=``: False (the test holds
    off that device); ``None`` for any other test."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    sides = (test.left, target.comparator)
    texts = [s.evaluated_value for s in sides if type(s) is cst.SimpleString]
    reads = [s for s in sides if type(s) is cst.Attribute and s.attr.value == "type"
             and type(s.value) is cst.Attribute and s.value.attr.value == "device"]
    if len(texts) != 1 or len(reads) != 1 or texts[0] not in _STRIDELESS:
        return None
    if type(target.operator) is cst.Equal:
        return True
    if type(target.operator) is cst.NotEqual:
        return False
    return None


def strideless_side(ctx, side: Branch, node: cst.CSTNode) -> bool:
    """True when ``side`` runs only where the tensors have no strides: its test (or the plain
    name it reads, bound to such a test before ``node``) says the device type is XLA."""
    test, taken = side.test, side.taken
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, taken = test.expression, not taken
    if type(test) is cst.Name:
        test = value_before(ctx, test.value, node) or test
    holds = _device_type_test(test)
    return holds is not None and holds == taken
