"""The layout of ``torch.einsum`` results: a one-operand reordering is a permuted view, a batched
product of two operands is contiguous when the output lists its dims in torch's order, anything
else has an unknown order. Exact strides are checked against torch; every lint case is run."""

from __future__ import annotations

import textwrap

import pytest

from semantic_probe import assert_layout_matches_torch, one

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

SC101 = get_rule("SC101")


@pytest.mark.parametrize(
    "expr, layout, strides",
    [
        ("torch.einsum('ijk->kji', torch.rand(2, 3, 4))", "non-contiguous", (1, 4, 12)),
        ("torch.einsum('ijk->ijk', torch.rand(2, 3, 4))", "contiguous", (12, 4, 1)),
        ("torch.einsum('ij->ij', torch.rand(3, 4).t())", "non-contiguous", (1, 4)),
        ("torch.einsum('ij->ji', torch.rand(3, 4).t())", "contiguous", (4, 1)),
        ("torch.einsum('...ij->...ji', torch.rand(2, 3, 4))", "non-contiguous", (12, 1, 4)),
        ("torch.einsum('kji', torch.rand(2, 3, 4))", "non-contiguous", (1, 4, 12)),
        ("torch.einsum('bhqk,bhkd->bhqd', torch.rand(2, 3, 4, 5), torch.rand(2, 3, 5, 6))",
         "contiguous", (72, 24, 6, 1)),
        ("torch.einsum('db,bg->gd', torch.rand(2, 3), torch.rand(3, 4))", "contiguous", (2, 1)),
    ],
)
def test_exact_strides_match_torch(expr, layout, strides):
    assert_layout_matches_torch(expr, layout, strides)


@pytest.mark.parametrize(
    "expr",
    [
        "torch.einsum('iij->ji', torch.rand(3, 3, 4))",  # a diagonal
        "torch.einsum('ijk->ki', torch.rand(2, 3, 4))",  # a sum
        "torch.einsum('bhqd,bhkd->bqhk', torch.rand(2, 3, 4, 5), torch.rand(2, 3, 6, 5))",
        "torch.einsum('ij,j->ji', torch.rand(2, 3), torch.rand(3))",  # no summed index
        "torch.einsum('ir,jr,kr->ijk', torch.rand(2, 5), torch.rand(3, 5), torch.rand(6, 5))",
    ],
)
def test_other_specs_leave_the_order_unknown(expr):
    f = one(f"import torch\nreveal({expr})\n")
    assert f.layout == "non-contiguous" and f.strides is None and f.perm is None


def test_generic_reordering_tracks_moved_dims():
    f = one("import torch\ndef f(x):\n    reveal(torch.einsum('nchw->nhwc', x))\n")
    assert f.perm == (0, 2, 3, 1) and f.moved_by == "einsum('nchw->nhwc')"


MAE_PATCHIFY = """\
import torch
def patchify(imgs, p):
    h = w = imgs.shape[2] // p
    x = imgs.reshape(imgs.shape[0], 3, h, p, w, p)
    x = torch.einsum('nchpwq->nhwpqc', x)
    x = x.{op}(imgs.shape[0], h * w, p**2 * 3)
    return x
"""

ATTENTION = """\
import torch
def attend(q, k, v):
    b, h, t, d = q.shape
    att = torch.einsum('bhqd,bhkd->bhqk', q, k).softmax(-1)
    y = torch.einsum('bhqk,bhkd->bhqd', att, v)
    return y.transpose(1, 2).{op}(b, t, h * d)
"""

# the scores laid out (b, q, h, k) by the product: the transposed view happens to be legal
SCORES = """\
import torch
def scores(q, k):
    s = torch.einsum('bhqd,bhkd->bqhk', q, k)
    b, n, h, m = s.shape
    return s.transpose(1, 2).view(b, h, n * m)
"""

PERMUTED_BACK = """\
import torch
def f(x):
    y = torch.einsum('nchw->nhwc', x)
    return y.permute(0, 3, 1, 2).view(x.shape[0], -1)
"""


def _run(code, *args):
    namespace: dict = {}
    exec(compile(code, "<case>", "exec"), namespace)
    return namespace[[k for k in namespace if not k.startswith("__") and k != "torch"][0]](*args)


def _args(name, torch):
    return {
        "mae": (torch.randn(2, 3, 8, 8), 4),
        "attention": (torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)),
        "scores": (torch.randn(2, 3, 4, 5), torch.randn(2, 3, 6, 5)),
        "permuted_back": (torch.randn(2, 3, 4, 5),),
    }[name]


@pytest.mark.parametrize("name, code, lines", [
    ("mae", MAE_PATCHIFY, [6]),
    ("attention", ATTENTION, [6]),
])
def test_views_after_einsum_are_flagged_and_reshape_twins_are_silent(name, code, lines):
    torch = pytest.importorskip("torch")
    bad, fixed = code.format(op="view"), code.format(op="reshape")
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        _run(bad, *_args(name, torch))
    _run(fixed, *_args(name, torch))
    assert [d.line for d in lint_text(bad, [SC101])] == lines
    assert lint_text(fixed, [SC101]) == []
    contiguous = code.format(op="contiguous().view")
    assert lint_text(contiguous, [SC101]) == []


@pytest.mark.parametrize("name, code", [("scores", SCORES), ("permuted_back", PERMUTED_BACK)])
def test_legal_views_after_einsum_are_silent(name, code):
    torch = pytest.importorskip("torch")
    _run(code, *_args(name, torch))
    assert lint_text(textwrap.dedent(code), [SC101]) == []


def test_mae_message_names_the_einsum():
    (d,) = lint_text(MAE_PATCHIFY.format(op="view"), [SC101])
    assert "not contiguous after `einsum('nchpwq->nhwpqc')`" in d.message


def test_einops_reordering_is_not_taken_as_plain():
    # einops.rearrange of a pure reordering returns `x.permute(...)`: transposing it back gives
    # x's own (plain) order and the view is legal (einops is not installed here: read from its
    # torch backend, which reshapes, permutes, then reshapes only when it must)
    code = ("from einops import rearrange\ndef f(x, t):\n    y = rearrange(x, 'b h n d -> b n h d')\n"
            "    z = rearrange(t.float(), 'b h n d -> b n h d')\n"
            "    return y.transpose(1, 2).view(x.shape[0], -1), z.transpose(1, 2).view(t.shape[0], -1)\n")
    assert lint_text(code, [SC101]) == []
