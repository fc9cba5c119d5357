"""Layouts of tensors whose rank is only bounded, recurrent layers' outputs, the ranks of layer
parameters, and slices of permuted tensors (the facts behind SC101's recall on real code)."""

from __future__ import annotations

import pytest

from semantic_probe import facts
from shapecheck.semantic.eval.layer_ranks import parameter_shape
from shapecheck.semantic.facts import CONTIGUOUS, NON_CONTIGUOUS, TENSOR
from shapecheck.shapes import Shape
from shapecheck.strides import generic_view_bounded, sliced_perm


def test_transpose_of_unknown_rank_bounds_the_rank_and_moves_the_leading_dims():
    y, z = facts("def f(y, x):\n    reveal(y.transpose(0, 1))\n    reveal(x.transpose(2, 3))\n")
    assert y.shape == Shape((None, None), rest_at=2) and y.perm == (1, 0)
    assert z.shape == Shape((None,) * 4, rest_at=4) and z.perm == (0, 1, 3, 2)


def test_negative_dims_and_unknown_order_keep_nothing():
    a, b = facts("def f(y, x):\n    reveal(y.transpose(-1, -2))\n"
                 "    reveal(torch.relu(x.permute(0, 2, 1)).transpose(0, 1))\n")
    assert a.perm is None
    assert b.perm is not None  # relu keeps its input's order, so the rank 3 of x
    c, = facts("def f(y, conv):\n    reveal(conv(y.permute(0, 2, 1)).transpose(0, 1))\n")
    assert c.perm is None  # an unknown call may keep its input's order: nothing starts plain


def test_t_is_exactly_two_dims_only_when_a_bound_says_at_least_two():
    bounded, unknown = facts("def f(out, w):\n    _, p = out.topk(3, 1)\n    reveal(p.t())\n    reveal(w.t())\n")
    assert bounded.shape == Shape((None, None)) and bounded.perm == (1, 0)
    assert unknown.shape is None and unknown.perm is None


def test_topk_keeps_the_rank_whatever_k_is():
    v, i = facts("def f(out, k):\n    v, i = out.topk(k, 1)\n    reveal(v)\n    reveal(i)\n")
    assert v.kind == TENSOR and v.shape == Shape((None, None), rest_at=2)
    assert i.shape == v.shape


def test_recurrent_layers_return_output_and_state():
    out, h, lstm_out, c, first = facts(
        "gru = nn.GRU(4, 8)\nlstm = nn.LSTM(4, 8, batch_first=True)\nx = torch.randn(5, 3, 4)\n"
        "out, h = gru(x)\nreveal(out)\nreveal(h)\no, (hn, cn) = lstm(x)\nreveal(o)\nreveal(cn)\n"
        "def f(y):\n    a, b = gru(y)\n    reveal(a)\n")
    bounded, = facts("gru = nn.GRU(4, 8)\ndef f(y):\n    z = torch.relu(y)\n    a, b = gru(z)\n    reveal(a)\n")
    assert bounded.kind == TENSOR and bounded.shape == Shape((None, None), rest_at=2)
    assert out.shape == Shape((5, 3, None)) and out.layout == CONTIGUOUS
    assert h.kind == TENSOR and h.shape == Shape((None, None, None))
    assert lstm_out.layout == NON_CONTIGUOUS and lstm_out.perm is None  # order unknown
    assert c.kind == TENSOR
    assert first.kind is None and first.shape is None  # `y` may be a PackedSequence


def test_parameter_ranks_agree_with_torch():
    torch = pytest.importorskip("torch")
    nn = torch.nn
    layers = {
        "Linear": nn.Linear(3, 4), "Bilinear": nn.Bilinear(2, 3, 4), "Embedding": nn.Embedding(5, 3),
        "EmbeddingBag": nn.EmbeddingBag(5, 3), "Conv1d": nn.Conv1d(2, 3, 3), "Conv2d": nn.Conv2d(2, 3, 3),
        "Conv3d": nn.Conv3d(2, 3, 3), "ConvTranspose2d": nn.ConvTranspose2d(2, 3, 3),
        "BatchNorm1d": nn.BatchNorm1d(3), "BatchNorm2d": nn.BatchNorm2d(3), "GroupNorm": nn.GroupNorm(1, 3),
        "InstanceNorm2d": nn.InstanceNorm2d(3, affine=True, track_running_stats=True), "PReLU": nn.PReLU(),
        "GRU": nn.GRU(3, 4), "LSTM": nn.LSTM(3, 4), "RNN": nn.RNN(3, 4), "LSTMCell": nn.LSTMCell(3, 4),
    }
    for name, layer in layers.items():
        for attr, value in [*layer.named_parameters(), *layer.named_buffers()]:
            if attr == "num_batches_tracked":
                continue
            shape = parameter_shape(name, attr)
            assert shape is not None and shape.rank == value.dim(), (name, attr)
            assert value.is_contiguous()
    assert parameter_shape("LayerNorm", "weight") is None  # its rank is that of normalized_shape


def test_bounded_view_needs_both_ranks_to_fail():
    assert generic_view_bounded([None, None], [1, 0], [-1]) is False
    assert generic_view_bounded([None, None], [1, 0], [None, -1]) is None  # rank 2: (n, -1) may split nothing
    assert generic_view_bounded([None, None, None], [0, 2, 1], [None, -1]) is False


def test_a_slice_opens_a_gap_outside_the_cut_dim_unless_it_is_outermost():
    assert sliced_perm([1, 0], [1, 0], [1]) == [2, 0]
    assert sliced_perm([0, 1, 3, 2], [0, 1, 3, 2], [0]) == [0, 1, 3, 2]


def test_negative_dims_of_unknown_rank_bound_the_trailing_dims_in_an_unknown_order():
    a, b, c = facts("def f(y, x, z, i, j):\n    reveal(y.transpose(-2, -1))\n"
                    "    reveal(x.transpose(0, -1))\n    reveal(z.transpose(i, j))\n")
    assert a.shape == Shape((None, None), rest_at=0)
    assert (a.layout, a.perm, b.layout, b.perm, c.layout) == (NON_CONTIGUOUS, None, NON_CONTIGUOUS, None,
                                                              NON_CONTIGUOUS)


def test_a_move_after_one_the_linter_cannot_follow_does_not_start_plain():
    # for a 2-d `k` the two transposes cancel: the view is legal
    torch = pytest.importorskip("torch")
    from shapecheck.engine.runner import lint_text
    from shapecheck.rules.catalog import get_rule

    code = ("def g(k):\n    return k.transpose(-2, -1).transpose(0, 1).view(-1)\n"
            "def h(k, i, j):\n    return k.transpose(i, j).transpose(0, 1).view(-1)\n")
    namespace: dict = {}
    exec(code, namespace)
    namespace["g"](torch.randn(3, 4))
    namespace["h"](torch.randn(3, 4), 0, 1)
    assert lint_text(code, [get_rule("SC101")]) == []
