"""Rank bounds that reductions over written axes and joins prove on tensors of unknown rank
(:mod:`shapecheck.semantic.eval.rank_bounds`), checked against torch 2.13 behaviour:
``torch.sum(t, dim=1)`` raises IndexError on a 1-D ``t``, ``torch.cat`` refuses 0-dim pieces,
``torch.stack`` adds a dim."""

from semantic_probe import shape

from shapecheck.semantic.eval.rank_bounds import bounded_join_shape, bounded_reduce_shape
from shapecheck.shapes import Shape, format_shape


def test_a_sum_over_dim_1_keeps_at_least_the_first_dim():
    assert shape("import torch\ndef f(x):\n    reveal(torch.sum(torch.exp(x), dim=1))\n") == "(?, ...)"


def test_a_sum_over_dim_1_with_keepdim_keeps_two_dims():
    assert shape("import torch\ndef f(x):\n    reveal(torch.exp(x).sum(1, keepdim=True))\n") == "(?, 1, ...)"


def test_a_sum_over_a_dim_counted_from_the_end_bounds_the_trailing_dims():
    assert format_shape(bounded_reduce_shape(None, [-2], False, "sum")) == "(..., ?)"
    assert bounded_reduce_shape(None, [-1], False, "sum") is None  # a 1-D input gives a 0-dim result
    assert format_shape(bounded_reduce_shape(Shape((None, 4), rest_at=0), [-2], True, "mean")) == "(..., 1, 4)"


def test_a_reduction_over_dim_0_of_unknown_rank_bounds_nothing():
    assert bounded_reduce_shape(None, [0], False, "sum") is None
    assert shape("import torch\ndef f(x):\n    reveal(torch.exp(x).sum(0))\n") == "unknown"


def test_a_selection_without_keepdim_bounds_nothing():
    # `torch.max(prob, dim=1)` picks a token per row in greedy decoding, often of one sentence
    assert bounded_reduce_shape(None, [1], False, "max") is None
    assert bounded_reduce_shape(Shape((None, None), rest_at=2), [1], False, "argmax") is None
    assert bounded_reduce_shape(Shape((None, None), rest_at=2), [1], True, "argmax") == Shape((None, 1), rest_at=2)


def test_mixed_signs_and_a_known_rank_give_no_bound():
    assert bounded_reduce_shape(None, [0, -1], False, "sum") is None
    assert bounded_reduce_shape(Shape((None, None)), [1], False, "sum") is None


def test_a_reduction_of_a_numpy_like_value_stays_unknown():
    assert shape("def f(x):\n    reveal(x.sum(1))\n") == "unknown"


def test_cat_and_stack_of_a_list_have_at_least_one_dim():
    assert shape("import torch\ndef f(xs):\n    reveal(torch.cat(xs))\n") == "(?, ...)"
    assert shape("import torch\ndef f(xs):\n    reveal(torch.stack(xs, dim=1))\n") == "(?, ?, ...)"
    assert shape("import torch\ndef f(xs):\n    reveal(torch.cat(xs, dim=-1))\n") == "(..., ?)"


def test_stack_of_listed_pieces_knows_the_new_dim():
    assert shape("import torch\ndef f(a, b):\n    reveal(torch.stack([torch.exp(a), torch.exp(b)]))\n") == "(2, ...)"
    assert bounded_join_shape(-1, 3) == Shape((3,), rest_at=0)


def test_an_unknown_dim_argument_gives_no_bound():
    assert shape("import torch\ndef f(xs, d):\n    reveal(torch.cat(xs, dim=d))\n") == "unknown"
