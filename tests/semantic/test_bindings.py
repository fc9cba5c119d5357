"""What assignments bind: unpacked sizes prove a rank, a rebinding is a new binding."""

from __future__ import annotations

from semantic_probe import reveal


def test_unpacking_shape_proves_rank():
    code = """
    import torch
    def f(x: torch.Tensor):
        b, t, c = x.shape
        reveal(x)
        reveal(b)
    """
    x, b = [f for f, _ in reveal(code)]
    assert x.shape.rank == 3 and b.kind == "int"


def test_rebinding_makes_a_new_binding():
    code = """
    import torch
    x = torch.zeros(2)
    reveal(x)
    reveal(x)
    x = torch.zeros(2)
    reveal(x)
    """
    a, b, c = [f for f, _ in reveal(code)]
    assert a is b and a is not c and a.same(c)
