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


def test_a_slice_written_from_a_tensor_that_may_require_grad_joins_its_graph():
    code = """
    import torch
    import torch.nn as nn
    fc = nn.Linear(4, 4)
    def f(x, y, n):
        out = torch.zeros(n, 4)
        out[0] = fc(x)
        reveal(out)
        known = torch.zeros(n, 4)
        known[0] = y
        reveal(known)
        kept = torch.zeros(n, 4)
        with torch.no_grad():
            kept[0] = fc(x)
        reveal(kept)
        numbers = torch.zeros(n, 4)
        numbers[0] = 1.0
        reveal(numbers)
    """
    written, unknown, under_no_grad, numbers = [f.grad for f, _ in reveal(code)]
    assert (written, unknown, under_no_grad, numbers) == ("non-leaf", None, "no-grad", "no-grad")
