"""The facts each side of an ``if`` gave a name, kept where the join lost a layout
(:mod:`shapecheck.semantic.branch_facts`), and the layouts of ``nn`` layers' outputs."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.semantic.branch_facts import BranchTable
from shapecheck.semantic.eval.layer_ranks import kept_shape
from shapecheck.semantic.facts import CONTIGUOUS, NON_CONTIGUOUS, TENSOR, Fact, join
from shapecheck.semantic.torch_api import FUNCTIONAL_RESULT_LAYOUT, NN_LAYER_FUNCTION
from shapecheck.shapes import Shape

PLAIN = Fact(kind=TENSOR, shape=Shape((None,) * 4), layout=CONTIGUOUS)
MOVED = Fact(kind=TENSOR, shape=Shape((None,) * 4), layout=NON_CONTIGUOUS, perm=(0, 2, 1, 3))
UNKNOWN_ORDER = Fact(kind=TENSOR, shape=Shape((None,) * 4))


def _noted(test: str, body: Fact, orelse: Fact, before=None, env=None):
    table = BranchTable()
    start = dict(env or {})
    if before is not None:
        start["y"] = before
    joined = {"y": join(body, orelse)}
    table.note(cst.parse_expression(test), start, {"y": body}, {"y": orelse}, joined)
    return table.sides(joined["y"])


def test_both_sides_of_a_flag_are_kept_with_who_rebound_the_name():
    body, orelse = _noted("self.flash", UNKNOWN_ORDER, PLAIN)
    assert (body.taken, body.fact, body.rebound) == (True, UNKNOWN_ORDER, True)
    assert (orelse.taken, orelse.fact, orelse.rebound) == (False, PLAIN, True)
    assert orelse.describe(lambda n: cst.Module([]).code_for_node(n)) == "`self.flash` is false"
    _, orelse = _noted("flag", PLAIN.with_(layout=CONTIGUOUS), MOVED, before=MOVED)
    assert orelse.rebound is False  # the value from before the `if`: what the other side guards


@pytest.mark.parametrize("test", ["x.is_contiguous()", "T == 1", "self.training", "not self.training",
                                  "a and x.dim() > 2", "n"])
def test_tests_that_may_decide_the_sizes_or_the_layout_keep_nothing(test):
    assert _noted(test, UNKNOWN_ORDER, PLAIN, env={"n": Fact(kind=TENSOR)}) == ()


def test_sides_that_agree_on_the_layout_keep_nothing():
    assert _noted("flag", PLAIN, PLAIN.with_(shape=Shape((2, None, None, None)))) == ()
    assert _noted("flag", UNKNOWN_ORDER, UNKNOWN_ORDER.with_(grad=None, shape=None)) == ()


def test_a_layer_over_n_spatial_dims_takes_at_most_n_plus_2():
    assert kept_shape(Shape((None,) * 3, rest_at=3), "batch", "Conv1d") == Shape((None,) * 3)
    assert kept_shape(Shape((None,) * 2, rest_at=2), "batch", "Conv1d") == Shape((None,) * 2, rest_at=2)
    assert kept_shape(Shape((None,) * 4, rest_at=0), "batch_channel", "max_pool2d") == Shape((None,) * 4)


def test_each_layer_names_a_function_of_the_layout_table():
    assert set(NN_LAYER_FUNCTION.values()) <= set(FUNCTIONAL_RESULT_LAYOUT)


def test_layers_lay_out_a_transposed_input_as_their_function_does():
    torch = pytest.importorskip("torch")
    nn = torch.nn
    x = torch.randn(2, 9, 4).transpose(1, 2)
    for layer in (nn.Conv1d(4, 4, 3), nn.ConvTranspose1d(4, 4, 3), nn.MaxPool1d(2), nn.Upsample(scale_factor=2),
                  nn.Softmax(-1), nn.LayerNorm(9), nn.InstanceNorm1d(4)):
        assert layer(x).is_contiguous(), layer
    for layer in (nn.AvgPool1d(2), nn.AdaptiveAvgPool1d(3), nn.Dropout1d(0.5)):
        assert not layer(x).is_contiguous(), layer
