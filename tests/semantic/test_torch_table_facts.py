"""Facts that follow the one torch table (``shapecheck.semantic.torch_api``) where the evaluator's
own copies had drifted from torch: each case names the torch behaviour it rests on."""

from __future__ import annotations

import pytest
from semantic_probe import facts, summary
from semantic_probe import one_with_head as one

from shapecheck.semantic.facts import BOOL, CPU, LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, NON_LEAF, TENSOR


def _shape(f) -> str:
    return str(f.shape.dims) if f.shape is not None else "unknown"


@pytest.mark.parametrize("call", ["a.greater_equal(b)", "a.less_equal(b)", "a.isclose(b)",
                                  "torch.greater_equal(a, b)", "torch.isclose(a, b)"])
def test_every_spelling_of_a_comparison_is_a_bool_tensor(call):
    f = one(f"a = torch.randn(2, 3)\nb = torch.randn(2, 3)\nreveal({call})\n")
    assert (f.kind, f.dtype_kind, _shape(f), f.grad) == (TENSOR, "bool", "(2, 3)", NO_GRAD)


@pytest.mark.parametrize("method", ["isposinf", "isneginf", "isreal", "signbit"])
def test_unary_bool_tests_are_bool_tensors_without_grad(method):
    f = one(f"x = torch.randn(3, requires_grad=True)\nreveal(x.{method}())\n")
    assert (f.kind, f.dtype_kind, _shape(f), f.grad) == (TENSOR, "bool", "(3,)", NO_GRAD)


@pytest.mark.parametrize("call", ["torch.round(x)", "x.floor()", "x.ceil()", "x.trunc()", "x.sign()"])
def test_step_functions_require_grad_like_torch_says(call):
    # torch gives them a grad_fn (a zero gradient): the result is a non-leaf that requires grad
    f = one(f"x = torch.randn(3, requires_grad=True)\nreveal({call})\n")
    assert summary(f) == (TENSOR, CPU, NON_LEAF)


@pytest.mark.parametrize("call", ["x.aminmax()[1]", "torch.aminmax(x)[1]"])
def test_aminmax_is_a_pair_of_values_not_indices(call):
    f = one(f"x = torch.randn(3, 4, requires_grad=True)\nreveal({call})\n")
    assert (f.kind, f.dtype_kind, f.grad) == (TENSOR, "float", NON_LEAF)


@pytest.mark.parametrize("method", ["tril_", "triu_", "addmm_(x, x)", "renorm_(2, 0, 1.0)"])
def test_inplace_methods_that_keep_the_shape_keep_it(method):
    call = method if "(" in method else method + "()"
    f = one(f"x = torch.randn(3, 3)\nx.{call}\nreveal(x)\n")
    assert (f.kind, _shape(f)) == (TENSOR, "(3, 3)")


@pytest.mark.parametrize("method", ["random_", "exponential_", "cauchy_", "log_normal_", "geometric_"])
def test_random_filling_methods_return_their_receiver(method):
    f = one(f"x = torch.randn(3, 3)\nreveal(x.{method}())\n")
    assert (f.kind, _shape(f), f.dtype_kind) == (TENSOR, "(3, 3)", "float")


def test_zero_grad_returns_none_not_the_module():
    assert one("m = nn.Linear(2, 3)\nreveal(m.zero_grad())\n").kind is None


def test_multihead_attention_holds_its_input_projection():
    f = one("m = nn.MultiheadAttention(4, 2)\nreveal(m)\n")
    assert (f.kind, f.params) == (MODULE, ("in_proj_weight", "in_proj_bias"))
    assert summary(one("m = nn.MultiheadAttention(4, 2)\nreveal(m.in_proj_weight)\n")) == (
        TENSOR, CPU, LEAF_REQUIRES_GRAD)


@pytest.mark.parametrize("loss", ["soft_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss"])
def test_every_functional_loss_is_a_float_scalar(loss):
    f = one(f"import torch.nn.functional as F\na = torch.randn(4, requires_grad=True)\n"
            f"b = torch.randn(4)\nreveal(F.{loss}(a, b))\n")
    assert (f.kind, _shape(f), f.dtype_kind, f.grad) == (TENSOR, "()", "float", NON_LEAF)


def test_dstack_joins_tensors_too():
    f = one("a = torch.randn(2, 3)\nreveal(torch.dstack([a, a]))\n")
    assert (f.kind, f.device, f.dtype_kind, f.grad) == (TENSOR, CPU, "float", NO_GRAD)


@pytest.mark.parametrize("attr", ["is_xla", "is_sparse_csr", "is_mtia", "is_ipu", "is_maia", "is_vulkan"])
def test_tensor_bool_attributes_are_python_bools(attr):
    assert one(f"a = torch.randn(2)\nreveal(a.{attr})\n").kind == BOOL


def test_chalf_casts_to_complex():
    f = one("a = torch.randn(2, 3)\nreveal(a.chalf())\n")
    assert (f.kind, f.dtype_kind, _shape(f)) == (TENSOR, "complex", "(2, 3)")


@pytest.mark.parametrize("dtype, kind", [("float8_e4m3fnuz", "float"), ("int4", "int"), ("uint3", "int")])
def test_every_dtype_of_torch_has_its_kind(dtype, kind):
    assert one(f"a = torch.randn(2)\nreveal(a.to(torch.{dtype}))\n").dtype_kind == kind


def test_module_moves_are_the_methods_nn_module_has():
    code = """
    class Moved(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(2))
            self.{move}()

    reveal(Moved())
    """
    # nn.Module has .mtia() (a move: the device is unknown) and no .mps() (the module stays on the CPU)
    assert facts(code.format(move="mtia"))[0].device is None
    assert facts(code.format(move="mps"))[0].device == CPU
