"""NodeMemo: values kept for the very node they were computed for."""

from __future__ import annotations

import libcst as cst

from shapecheck.engine.checker import analyze
from shapecheck.engine.config import selected_rules
from shapecheck.semantic.node_memo import NodeMemo, _MEMOS, forget_node_memos


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


def test_forget_node_memos_empties_every_memo():
    first, second = NodeMemo[int](), NodeMemo[int](limit=0)
    node = cst.parse_expression("a")
    first.put(node, 1)
    second.put(node, 2)
    forget_node_memos()
    assert (first.get(node), second.get(node)) == (None, None)


def test_a_released_file_leaves_no_node_of_it_in_any_memo():
    source = (
        "import torch\nfrom torch import nn\n\n"
        "class Block(nn.Module):\n"
        "    def forward(self, x):\n"
        "        h = self.helper(x)\n"
        "        return h.transpose(1, 2).view(x.size(0), -1) / h.sum(1)\n\n"
        "    def helper(self, x):\n"
        "        return torch.relu(x) @ x\n"
    )
    module = cst.parse_module(source)
    checker = analyze(module, [cls() for cls in selected_rules([])], source)
    checker.release()
    assert any(True for _ in _MEMOS)
    assert all(not memo._items for memo in _MEMOS)
