"""Joins at ``if``/loops/``try``, early returns, loop bodies visited once, one-line suites."""

from __future__ import annotations

from semantic_probe import one, reveal

from shapecheck.shapes import format_shape


def test_joins_at_if_and_loops():
    code = """
    import torch
    x = torch.zeros(2, 3)
    if cond:
        x = torch.zeros(2, 3)
    reveal(x)
    if cond:
        y = torch.zeros(4)
    else:
        y = torch.zeros(5)
    reveal(y)
    z = torch.zeros(3)
    for i in range(3):
        reveal(z)
        z = z.unsqueeze(0)
    reveal(z)
    d = "cpu"
    if cond:
        d = "cuda"
    reveal(d)
    """
    seen = [f for f, _ in reveal(code)]
    assert format_shape(seen[0].shape) == "(2, 3)"
    assert format_shape(seen[1].shape) == "(?,)" and seen[1].kind == "tensor"  # 1-d on both paths
    assert seen[2].shape is None and seen[3].shape is None
    assert seen[4].device == "maybe-cuda"


def test_loop_bodies_are_reported_once():
    code = """
    import torch
    x = torch.zeros(3)
    for i in range(10):
        while i:
            reveal(x)
    """
    assert len(reveal(code)) == 1


def test_early_return_branch_does_not_join():
    code = """
    import torch
    def f(flag):
        x = torch.zeros(2, 3)
        if flag:
            x = None
            return x
        reveal(x)
    """
    assert format_shape(one(code).shape) == "(2, 3)"


def test_one_line_suites_are_analysed():
    code = """
    import torch
    x = torch.zeros(2, 3)
    if cond: x = torch.zeros(5)
    reveal(x)
    for i in range(2): reveal(x)
    """
    first, second = [f for f, _ in reveal(code)]
    assert first.shape is None and first.kind == "tensor"
    assert second.kind == "tensor"
