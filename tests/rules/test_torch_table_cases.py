"""Rule cases that follow the one torch table (``shapecheck.semantic.torch_api``) where the rules'
own copies had drifted from torch: each case names the torch behaviour it rests on."""

from __future__ import annotations

from functools import partial

import pytest
from rule_harness import family_rules, finding_lines

codes = partial(finding_lines, rules=family_rules("SC"))

_PAIR = "import torch\na = torch.randn(3)\nb = torch.randn(3)\n"
_LOSS_HEAD = "import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3, requires_grad=True)\n"


@pytest.mark.parametrize("test", ["a.greater_equal(b)", "a.less_equal(b)", "a.isclose(b)",
                                  "torch.greater_equal(a, b)", "a.isposinf()", "a.signbit()"])
def test_sc601_knows_every_spelling_of_a_bool_tensor(test):
    assert codes(f"{_PAIR}if {test}:\n    pass\n") == [("SC601", 4)]


@pytest.mark.parametrize("function", ["greater", "less_equal", "not_equal", "isclose", "logical_and",
                                      "bitwise_or", "remainder", "hypot", "xlogy"])
def test_sc202_knows_every_broadcasting_function(function):
    src = f"import torch\na = torch.randn(2, 3)\nb = torch.randn(4, 5)\nc = torch.{function}(a, b)\n"
    if function == "bitwise_or":
        src = src.replace("torch.randn(2, 3)", "torch.zeros(2, 3, dtype=torch.int64)")
    assert codes(src) == [("SC202", 4)]


@pytest.mark.parametrize("prediction", ["x.isnan().float()", "x.cummax(0).indices.float()",
                                        "x.argmax(dim=1).bool().float()", "x.any(dim=1).float()",
                                        "x.logical_not().float()"])
def test_sc306_knows_every_op_without_gradient(prediction):
    src = f"{_LOSS_HEAD}loss = F.mse_loss({prediction}, torch.randn(4))\n"
    assert codes(src) == [("SC306", 4)]


def test_sc306_knows_every_functional_loss():
    src = f"{_LOSS_HEAD}loss = F.triplet_margin_with_distance_loss(x.argmax(dim=1), x, x)\n"
    assert codes(src) == [("SC306", 4)]


@pytest.mark.parametrize("move", ["cfloat", "cdouble", "chalf", "xpu", "ipu", "mtia"])
def test_sc402_flags_every_discarded_conversion(move):
    assert codes(f"import torch\ny = torch.randn(3)\ny.{move}()\n") == [("SC402", 3)]


def test_sc402_leaves_mps_alone_because_tensors_have_no_such_method():
    assert codes("import torch\ny = torch.randn(3)\ny.mps()\n") == []


def test_sc302_sees_that_round_saves_for_backward_through_its_result():
    # torch.round(x) requires grad (its gradient is zero): sin() saves it, add_() then changes it
    src = ("import torch\nx = torch.randn(3, requires_grad=True)\nr = torch.round(x)\ny = r.sin()\n"
           "r.add_(1)\ny.sum().backward()\n")
    assert codes(src) == [("SC302", 5)]


def test_sc309_sees_that_a_rounded_tensor_still_requires_grad():
    assert codes("import torch\nx = torch.randn(3, requires_grad=True)\nn = x.round().numpy()\n") == [("SC309", 3)]


@pytest.mark.parametrize("dtype", ["int4", "uint7", "int1"])
def test_sc305_knows_every_integer_dtype(dtype):
    assert codes(f"import torch\nx = torch.zeros(3, dtype=torch.{dtype}, requires_grad=True)\n") == [("SC305", 2)]


@pytest.mark.parametrize("method", ["get_device()", "__len__()"])
def test_sc303_lets_metadata_reads_of_data_pass(method):
    assert codes(f"import torch\nw = torch.nn.Parameter(torch.randn(3))\nd = w.data.{method}\n") == []
