"""NodeMemo: values kept for the very node they were computed for."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.node_memo import NodeMemo


def test_a_value_is_returned_for_its_node_only():
    memo: NodeMemo[str] = NodeMemo()
    a, b = cst.parse_expression("x"), cst.parse_expression("x")
    assert memo.put(a, "a") == "a"
    assert memo.get(a) == "a"
    assert memo.get(b) is None


def test_extras_are_part_of_the_key():
    memo: NodeMemo[int] = NodeMemo()
    node = cst.parse_expression("f(x)")
    memo.put(node, 1, "x")
    memo.put(node, 2, "y")
    assert (memo.get(node, "x"), memo.get(node, "y"), memo.get(node)) == (1, 2, None)


def test_a_full_memo_starts_again_and_a_limit_of_zero_keeps_the_last():
    memo: NodeMemo[int] = NodeMemo(limit=0)
    first, second = cst.parse_expression("a"), cst.parse_expression("b")
    memo.put(first, 1)
    memo.put(second, 2)
    assert (memo.get(first), memo.get(second)) == (None, 2)
    memo.clear()
    assert memo.get(second) is None


def test_empty_values_are_kept():
    memo: NodeMemo[frozenset[str]] = NodeMemo()
    node = cst.parse_expression("a")
    memo.put(node, frozenset())
    assert memo.get(node) == frozenset()
