"""Layouts: exact strides with known sizes (checked against torch), moved dims with unknown ones."""

from __future__ import annotations

import pytest

from semantic_probe import assert_layout_matches_torch, one

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule


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
    assert_layout_matches_torch(expr, layout, strides)


def test_unknown_shapes_track_moved_dims():
    code = """
    def f(x, b, t, h, d):
        y = x.view(b, t, h, d).transpose(1, 2)
        reveal(y)
    """
    f = one(code)
    assert f.perm == (0, 2, 1, 3) and f.moved_by == ".transpose(1, 2)"


LAYER_CASES = {
    # F.interpolate of a channels-last order keeps it: permuting back gives a plain tensor
    "interpolate_channels_last": (
        "def f(p, s, dim, h, w):\n"
        "    p = p.reshape(1, s, s, dim).permute(0, 3, 1, 2)\n"
        "    p = F.interpolate(p, size=(h, w), mode='bicubic')\n"
        "    return p.permute(0, 2, 3, 1).view(1, -1, dim)\n",
        lambda torch: (torch.randn(1, 16, 8), 4, 8, 6, 6), True),
    "interpolate_with_size_one_dims": (
        "def f(pos, embeddings):\n"
        "    n = embeddings.shape[1] - 1\n"
        "    dim = pos.shape[-1]\n"
        "    p = pos[:, 1:].reshape(1, 1, -1, dim).permute(0, 3, 1, 2)\n"
        "    p = F.interpolate(p, size=(p.shape[-2], n), mode='bicubic', align_corners=False)\n"
        "    return p.permute(0, 2, 3, 1).view(1, -1, dim)\n",
        lambda torch: (torch.randn(1, 17, 8), torch.randn(2, 10, 8)), True),
    "max_pool_channels_last_known": (
        "def f():\n"
        "    x = torch.rand(2, 4, 6, 8).permute(0, 3, 1, 2)\n"
        "    return F.max_pool2d(x, 2).permute(0, 2, 3, 1).view(2, -1)\n",
        lambda torch: (), True),
    "interpolate_other_order": (
        "def f(x):\n"
        "    b, c, h, w = x.shape\n"
        "    y = F.interpolate(x.transpose(2, 3), scale_factor=2)\n"
        "    return y.permute(0, 2, 3, 1).view(b, -1)\n",
        lambda torch: (torch.randn(2, 3, 4, 5),), False),
    "layer_norm_is_contiguous": (
        "def f(x):\n"
        "    b, c, h, w = x.shape\n"
        "    y = F.layer_norm(x.permute(0, 2, 3, 1), (c,))\n"
        "    return y.permute(0, 3, 1, 2).view(b, -1)\n",
        lambda torch: (torch.randn(2, 3, 4, 5),), False),
    "conv_module_keeps_order": (
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 4, 3)\n"
        "    def forward(self, x):\n"
        "        b, h, w, c = x.shape\n"
        "        y = self.conv(x.permute(0, 3, 1, 2))\n"
        "        return y.permute(0, 2, 3, 1).view(b, -1)\n"
        "def f(x):\n"
        "    return M()(x)\n",
        lambda torch: (torch.randn(2, 5, 5, 3),), True),
    "unknown_callable_may_keep_order": (
        "def f(x, layer):\n"
        "    b, h, w, c = x.shape\n"
        "    y = layer(x.permute(0, 3, 1, 2))\n"
        "    return y.permute(0, 2, 3, 1).view(b, -1)\n",
        lambda torch: (torch.randn(2, 5, 5, 3), torch.nn.Conv2d(3, 4, 3)), True),
}


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_layers_lay_out_their_result_as_torch_does(name):
    """A layer's result keeps its input's dim order where torch does (channels-last), is plain
    where torch makes it so, and is of unknown order where the linter cannot tell."""
    torch = pytest.importorskip("torch")
    body, args, works = LAYER_CASES[name]
    code = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + body
    scope: dict = {}
    exec(code, scope)
    try:
        scope["f"](*args(torch))
        ran = True
    except RuntimeError:
        ran = False
    assert ran == works
    flagged = [d.code for d in lint_text(code, [get_rule("SC101")])]
    assert flagged == ([] if works else ["SC101"])
