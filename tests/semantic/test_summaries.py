"""Facts that cross function boundaries: re-analysis of a callee with the facts of a call site."""

from __future__ import annotations

import libcst as cst

from semantic_probe import HEAD, one, reveal

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule
from shapecheck.semantic.facts import CONTIGUOUS, CPU, CUDA, NON_CONTIGUOUS, NON_LEAF, TENSOR
from shapecheck.semantic.summaries import Definitions, index_module
from shapecheck.shapes import Shape

SC101 = get_rule("SC101")
SC304 = get_rule("SC304")


def codes(text: str, *rules) -> list[tuple[str, int]]:
    """(code, line) of each diagnostic of ``rules`` on ``text``."""
    return [(d.code, d.line) for d in lint_text(text, list(rules))]


# ---------------------------------------------------------------------------- returns
def test_helper_return_is_re_analysed_with_the_arguments():
    f = one(HEAD + "def heads(x):\n    return x.transpose(1, 2)\n"
                   "reveal(heads(torch.randn(2, 3, 4)))\n")
    assert f.kind == TENSOR and f.shape == Shape((2, 4, 3)) and f.layout == NON_CONTIGUOUS


def test_helper_defined_after_the_caller_is_found():
    f = one(HEAD + "def caller():\n    reveal(later(torch.ones(5)))\n"
                   "def later(x):\n    return x * 2\n")
    assert f.shape == Shape((5,)) and f.device == CPU


def test_keyword_and_default_arguments_bind_parameters():
    f = one(HEAD + "def pick(x, dim=0, *, keep=False):\n    return x.sum(dim, keepdim=keep)\n"
                   "reveal(pick(torch.ones(2, 3), keep=True))\n")
    assert f.shape == Shape((1, 3))


def test_a_branch_that_changes_the_result_joins_to_what_both_say():
    seen = reveal(HEAD + "def maybe(x, flag):\n    if flag:\n        return x.t()\n    return x\n"
                         "def g(flag):\n    reveal(maybe(torch.ones(2, 3), flag))\n")
    f = seen[0][0]
    assert f.kind == TENSOR and f.shape == Shape((None, None)) and f.layout is None  # 2-d on both paths


def test_a_path_that_falls_off_the_end_returns_none():
    f = one(HEAD + "def maybe(x, flag):\n    if flag:\n        return x.t()\n"
                   "def g(flag):\n    reveal(maybe(torch.ones(2, 3), flag))\n")
    assert f.kind is None


def test_generators_recursion_and_missing_arguments_stay_unknown():
    assert one(HEAD + "def gen(x):\n    yield x.t()\nreveal(gen(torch.ones(2, 3)))\n").kind is None
    assert one(HEAD + "def rec(x):\n    return rec(x)\nreveal(rec(torch.ones(2, 3)))\n").kind is None
    assert one(HEAD + "def need(x, y):\n    return x\nreveal(need(torch.ones(2)))\n").kind is None


def test_decorated_and_rebound_functions_are_not_resolved():
    assert one(HEAD + "import functools\n@functools.lru_cache\ndef f(x):\n    return x.t()\n"
                      "reveal(f(torch.ones(2, 3)))\n").kind is None
    assert one(HEAD + "def f(x):\n    return x.t()\nf = print\nreveal(f(torch.ones(2, 3)))\n").kind is None


def test_a_parameter_shadows_the_function_of_the_same_name():
    f = one(HEAD + "def helper(x):\n    return x.t()\n"
                   "def g(helper):\n    reveal(helper(torch.ones(2, 3)))\n")
    assert f.kind is None


def test_the_callee_runs_under_the_callers_grad_mode():
    code = HEAD + ("w = torch.ones(3, requires_grad=True)\n"
                   "def scale(x):\n    return x * w\n"
                   "def g():\n    with torch.no_grad():\n        reveal(scale(torch.ones(3)))\n"
                   "    reveal(scale(torch.ones(3)))\n")
    (off, _), (on, _) = reveal(code)
    assert off.grad is not None and off.grad != NON_LEAF
    assert on.grad == NON_LEAF


def test_size_symbols_of_the_callee_do_not_leak():
    f = one(HEAD + "from jaxtyping import Float\n"
                   "def mine(x) -> Float[torch.Tensor, 'Q R']:\n    y: Float[torch.Tensor, 'Q R'] = x\n    return y\n"
                   "reveal(mine(torch.ones(2, 3)))\n")
    assert f.shape is None or all(not isinstance(d, str) for d in f.shape.dims)


# ---------------------------------------------------------------------------- methods and modules
_MODULE = HEAD + """\
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 3)
    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)
"""


def test_calling_a_local_module_instance_runs_its_forward():
    f = one(_MODULE + "model = Net()\nreveal(model(torch.randn(64, 10)))\n")
    assert f.kind == TENSOR and f.shape == Shape((64, 3)) and f.grad == NON_LEAF and f.device == CPU


def test_forward_through_a_submodule_and_a_method_of_self():
    code = HEAD + """\
class Attn(nn.Module):
    def split(self, x):
        return x.transpose(1, 2)
    def forward(self, x):
        return self.split(x)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attn()
    def forward(self, x):
        return self.attn(x)
reveal(Block()(torch.randn(2, 3, 4)))
"""
    f = one(code)
    assert f.shape == Shape((2, 4, 3)) and f.layout == NON_CONTIGUOUS


def test_a_method_overridden_in_a_subclass_is_not_resolved_through_self():
    code = HEAD + """\
class Base:
    def prep(self, x):
        return x.t()
    def run(self, x):
        reveal(self.prep(x))
class Child(Base):
    def prep(self, x):
        return x.t().contiguous()
"""
    assert one(code).kind is None


def test_the_callee_of_a_method_reads_the_attributes_init_assigned():
    code = HEAD + """\
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 8)
    def project(self, x):
        return self.proj(x)
    def forward(self, x):
        reveal(self.project(torch.randn(2, 4)))
"""
    f = one(code)
    assert f.shape == Shape((2, 8)) and f.layout == CONTIGUOUS


def test_index_keeps_single_definitions_only():
    module = cst.parse_module("def a(): pass\ndef b(): pass\nb = 1\nif x:\n    def c(): pass\n"
                              "class K:\n    def m(self): pass\n    def m(self): pass\n    def n(self): pass\n")
    defs: Definitions = index_module(module.body)
    assert set(defs.functions) == {"a"}
    assert set(defs.classes["K"].methods) == {"n"}


# ---------------------------------------------------------------------------- what the rules see
def test_view_of_a_transposed_helper_result_is_flagged_in_the_caller():
    bad = HEAD + "def heads(x):\n    return x.transpose(1, 2)\ny = torch.randn(2, 3, 4)\nz = heads(y).view(2, 12)\n"
    assert codes(bad, SC101) == [("SC101", 6)]
    good = bad.replace("x.transpose(1, 2)", "x.transpose(1, 2).contiguous()")
    assert codes(good, SC101) == []


def test_backward_on_the_output_of_a_local_model_is_flagged():
    bad = _MODULE + "model = Net()\ndef train():\n    output = model(torch.randn(64, 10))\n    output.backward()\n"
    assert codes(bad, SC304) == [("SC304", 13)]
    good = bad.replace("output.backward()", "output.sum().backward()")
    assert codes(good, SC304) == []


# ---------------------------------------------------------------------------- what a callee leaves in its arguments
def test_a_helper_that_moves_a_module_moves_the_callers_module():
    code = HEAD + ("def to_gpu(m):\n    m.cuda()\n"
                   "net = nn.Linear(2, 2)\nto_gpu(net)\nreveal(net)\nreveal(net(torch.randn(3, 2)))\n")
    (moved, _), (out, _) = reveal(code)
    assert moved.device == CUDA and out.device is None


def test_a_helper_that_rebinds_its_parameter_changes_nothing_in_the_caller():
    code = HEAD + ("def f(x):\n    x = x.t()\n    x.mul_(2)\n    return x\n"
                   "y = torch.ones(2, 3)\nz = f(y)\nreveal(y)\nreveal(z)\n")
    (y, _), (z, _) = reveal(code)
    assert y.shape == Shape((2, 3)) and y.layout == CONTIGUOUS
    assert z.shape == Shape((3, 2)) and z.layout == NON_CONTIGUOUS


def test_a_helper_that_changes_an_argument_in_place_changes_it_in_the_caller():
    code = HEAD + ("def shrink(x):\n    x.resize_(4)\n"
                   "y = torch.ones(2, 3)\nshrink(y)\nreveal(y)\n")
    assert one(code).shape is None


def test_an_unknown_function_still_forgets_the_module_passed_to_it():
    code = HEAD + "net = nn.Linear(2, 2)\nunknown(net)\nreveal(net)\n"
    assert one(code).device is None


def test_the_output_of_a_local_model_in_a_training_loop_has_the_rank_forward_gives():
    code = HEAD + """\
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 3)
    def forward(self, x):
        return F.log_softmax(self.fc(x).view(-1, 3), dim=1)
def train(loader):
    model = Net()
    for data, target in loader:
        output = model(data)
        output.backward()
"""
    assert codes(code, SC304) == [("SC304", 14)]
    assert codes(code.replace("output.backward()", "F.nll_loss(output, target).backward()"), SC304) == []


def test_a_reduction_of_an_argument_is_named_as_the_caller_wrote_it():
    code = HEAD + "def row_sums(P):\n    return P.sum(1)\nN = torch.ones(27, 27)\nN = N / row_sums(N)\n"
    found = lint_text(code, [get_rule("SC201")])
    assert [(d.code, d.line) for d in found] == [("SC201", 6)]
    assert "`row_sums(N)`" in found[0].message
    fixed = code.replace("P.sum(1)", "P.sum(1, keepdim=True)")
    assert lint_text(fixed, [get_rule("SC201")]) == []
