"""Pieces of ``unbind``/``chunk`` of a permuted tensor keep its dim order (the qkv split of
attention code); each case is run with torch."""

from __future__ import annotations

import pytest

from semantic_probe import facts

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

QKV = """\
def f(x, H, C):
    B, N, _ = x.shape
    qkv = x.reshape(B, N, 3, H, C // H).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.{split}
    return {use}
"""


@pytest.mark.parametrize("split, use, raises", [
    ("unbind(0)", "q.transpose(1, 2).view(B, N, C)", False),
    ("unbind(0)", "q.view(B, -1)", True),
    ("unbind(0)", "q.transpose(1, 2).reshape(B, N, C)", False),
    ("chunk(3, 0)", "q.transpose(2, 3).view(1, B, N, C)", False),
    ("chunk(3, 0)", "q.transpose(2, 3).reshape(1, B, N, C)", False),
])
def test_qkv_pieces_keep_the_order_of_the_permuted_tensor(split, use, raises):
    torch = pytest.importorskip("torch")
    code = QKV.format(split=split, use=use)
    namespace: dict = {}
    exec(code, namespace)
    if raises:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            namespace["f"](torch.randn(2, 5, 36), 3, 12)
    else:
        namespace["f"](torch.randn(2, 5, 36), 3, 12)
    lines = [d.line for d in lint_text(code, [get_rule("SC101")])]
    assert lines == ([5] if raises else [])


def test_pieces_of_a_tensor_in_an_unknown_order_do_not_start_plain():
    (q,) = facts("def f(x, i, j):\n    q, k = torch.relu(x.transpose(i, j)).unbind(0)\n    reveal(q)\n")
    assert q.perm is None and q.layout in (None, "non-contiguous")
