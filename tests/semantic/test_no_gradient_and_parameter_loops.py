"""The ``no_gradient_from`` and ``parameter_loop`` facts: set by the evaluator and the loop walk,
carried by bindings, joined by the engine's rule (unknown unless the same on every path)."""

from __future__ import annotations

import textwrap

from semantic_probe import reveal

from shapecheck.semantic.facts import ParamLoop

HEAD = "import torch\nimport torch.nn as nn\nx = torch.randn(4, 3, requires_grad=True)\n"


def _no_gradient(code: str) -> list:
    return [f.no_gradient_from for f, _flags in reveal(HEAD + textwrap.dedent(code))]


def test_ops_without_gradient_name_their_source():
    assert _no_gradient("""\
        reveal(torch.argmax(x, dim=1))
        reveal(x.argsort())
        reveal(x > 0)
        reveal(x.max(dim=1).indices)
        reveal(torch.topk(x, 2)[1])
        reveal(torch.round(x))
        reveal(x.max(dim=1).values)
        reveal(x * 2)
    """) == ["`torch.argmax`", "`.argsort()`", "a comparison", "the indices of `max`",
             "the indices of `topk`", "`torch.round`", None, None]


def test_casts_moves_views_sums_and_arithmetic_with_numbers_keep_it_other_ops_drop_it():
    assert _no_gradient("""\
        p = x.argmax(dim=1)
        reveal(p)
        reveal(p.float().view(-1).cpu())
        reveal(p.float() * 2)
        reveal(p.sum())
        q = p
        reveal(q)
        reveal(1 - (p == 0).float().mean())
        reveal(torch.mean((x > 0).float()))
        reveal(p.float() * x[:, 0])
        reveal(p.float().cumsum(0))
    """) == ["`.argmax()`", "`.argmax()`", "`.argmax()`", "`.argmax()`", "`.argmax()`", "a comparison",
             "a comparison", None, None]


def test_a_copy_of_a_graph_value_is_detached():
    assert _no_gradient("""\
        y = x * 2
        reveal(torch.tensor(y, requires_grad=True))
        reveal(torch.Tensor([y.sum().item()]))
        reveal(torch.tensor(float(y.sum())))
        reveal(torch.Tensor(y))
        reveal(torch.tensor([1.0, 2.0]))
        reveal(torch.tensor(x))
    """) == ["`torch.tensor(...)`, a copy detached from the graph",
             "`torch.Tensor(...)`, a copy of Python numbers detached from the graph",
             "`torch.tensor(...)`, a copy of Python numbers detached from the graph", None, None, None]


def test_a_value_without_gradient_on_one_branch_only_is_unknown_after_the_join():
    assert _no_gradient("""\
        def f(flag):
            p = x.softmax(dim=1)
            if flag:
                p = (p > 0.5).float()
            reveal(p)
            q = x.argmax(dim=1)
            if flag:
                q = x.argmin(dim=1)
            reveal(q)
            r = x.argmax(dim=1)
            if flag:
                r = x.argmax(dim=1)
            reveal(r)
    """) == [None, None, "`.argmax()`"]


def test_rebinding_drops_it():
    assert _no_gradient("p = x.argmax()\np = x * 2\nreveal(p)\n") == [None]


def _loops(code: str) -> list:
    return [f.parameter_loop for f, _flags in reveal(HEAD + textwrap.dedent(code))]


def test_loop_variables_over_parameters():
    assert _loops("""\
        model = nn.Linear(3, 3)
        def f(thing):
            for p in model.parameters():
                reveal(p)
            for name, q in thing.named_parameters():
                reveal(q)
            for r in thing.parameters():
                reveal(r)
            for s in thing.children():
                reveal(s)
    """) == [ParamLoop.MODULE, ParamLoop.GUESSED, ParamLoop.GUESSED, None]


def test_a_loop_variable_rebound_in_the_body_is_no_longer_a_parameter():
    assert _loops("""\
        def f(thing):
            for p in thing.parameters():
                p = p * 2
                reveal(p)
    """) == [None]
