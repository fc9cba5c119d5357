"""Layouts: exact strides with known sizes (checked against torch), moved dims with unknown ones."""

from __future__ import annotations

import pytest

from semantic_probe import one


@pytest.mark.parametrize(
    "expr, layout, strides",
    [
        ("torch.rand(32, 32, 3).permute(2, 0, 1)", "non-contiguous", (1, 96, 3)),
        ("torch.rand(32, 32, 3).permute(2, 0, 1).view(3, -1)", "non-contiguous", (1, 3)),
        ("torch.rand(3, 4).t().reshape(4, 3)", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t().reshape(12)", "contiguous", (1,)),
        ("torch.rand(3, 4).t().clone()", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t() * 2", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t().float()", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t().contiguous()", "contiguous", (3, 1)),
        ("torch.rand(3, 4).t().t()", "contiguous", (4, 1)),
        ("torch.rand(3, 4)[:, :2]", "non-contiguous", (4, 1)),
        ("torch.rand(3, 4)[1:]", "contiguous", (4, 1)),
        ("torch.rand(1, 4).expand(3, 4)", "non-contiguous", (0, 1)),
        ("torch.rand(3, 4) @ torch.rand(4, 5)", "contiguous", (5, 1)),
    ],
)
def test_exact_strides_match_torch(expr, layout, strides):
    torch = pytest.importorskip("torch")
    f = one(f"import torch\nreveal({expr})\n")
    assert f.layout == layout
    assert f.strides == strides
    real = eval(expr, {"torch": torch})
    assert tuple(real.stride()) == strides
    assert real.is_contiguous() == (layout == "contiguous")


def test_unknown_shapes_track_moved_dims():
    code = """
    def f(x, b, t, h, d):
        y = x.view(b, t, h, d).transpose(1, 2)
        reveal(y)
    """
    f = one(code)
    assert f.perm == (0, 2, 1, 3) and f.moved_by == ".transpose(1, 2)"
