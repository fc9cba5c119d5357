"""VersionMemo: per-node values carried from one version of a document to the next."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.config_sizes import constructed_sizes
from shapecheck.semantic.module_state import _function_scope
from shapecheck.semantic.version_memo import VersionMemo, carried, carry, carrying


def test_nothing_is_kept_outside_a_version():
    node = cst.parse_expression("x")
    assert carry("t", node, 1) == 1
    assert carried("t", node) is None


def test_a_value_is_found_for_its_node_and_table_only():
    memo = VersionMemo()
    a, b = cst.parse_expression("x"), cst.parse_expression("x")
    with carrying(memo):
        carry("t", a, [])
        assert carried("t", a) == []
        assert carried("t", b) is None
        assert carried("u", a) is None


def test_a_version_keeps_what_the_last_one_used():
    memo = VersionMemo()
    kept, dropped = cst.parse_expression("a"), cst.parse_expression("b")
    with carrying(memo):
        carry("t", kept, 1)
        carry("t", dropped, 2)
    with carrying(memo):
        assert carried("t", kept) == 1  # `dropped` is not asked for in this version
    with carrying(memo):
        assert (carried("t", kept), carried("t", dropped)) == (1, None)
    assert len(memo) == 0  # a version has started and used nothing yet


def test_an_unchanged_function_keeps_its_scope_and_a_changed_one_gets_a_new_one():
    memo = VersionMemo()
    module = cst.parse_module("def f(m):\n    m.to('cuda')\n")
    changed = cst.parse_module("def f(m):\n    m.to('cpu')\n")
    body, params = module.body[0].body.body, frozenset({"m"})
    with carrying(memo):
        first = _function_scope(body, params)
    with carrying(memo):
        assert _function_scope(body, params) is first
        assert _function_scope(body, frozenset({"m", "n"})) is not first
        assert _function_scope(changed.body[0].body.body, params) is not first


def test_constructed_sizes_read_the_constructions_of_the_version_they_are_asked_about():
    source = ("import torch.nn as nn\n\nclass D(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n\n"
              "def main():\n    return D({n})\n")
    memo = VersionMemo()
    first = cst.parse_module(source.format(n=5))
    second = first.with_changes(body=[first.body[0], first.body[1], cst.parse_module(source.format(n=6)).body[2]])
    with carrying(memo):
        assert constructed_sizes(first, first.body[1]) == {"n": 5}
    with carrying(memo):
        assert constructed_sizes(second, second.body[1]) == {"n": 6}
