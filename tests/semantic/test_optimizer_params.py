"""The modules whose parameters an optimizer's ``params`` argument holds, read as written."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.semantic.optimizer_params import covers, updated_modules


@pytest.mark.parametrize(
    "params, modules",
    [
        ("D.parameters()", {"D"}),
        ("self.model.encoder.parameters()", {"self.model.encoder"}),
        ("model.parameters(recurse=True)", {"model"}),
        ("list(G.parameters()) + list(D.parameters())", {"G", "D"}),
        ("itertools.chain(a.parameters(), b.parameters())", {"a", "b"}),
        ("chain(a.parameters(), b.parameters())", {"a", "b"}),
        ("tuple(a.parameters())", {"a"}),
        ("filter(lambda p: p.requires_grad, model.parameters())", {"model"}),
        ("[*enc.parameters(), *dec.parameters()]", {"enc", "dec"}),
        ("[{'params': enc.parameters()}, {'params': head.parameters(), 'lr': 1e-3}]", {"enc", "head"}),
        # anything not written out leaves the modules unknown
        ("params", None),
        ("model.parameters(False)", None),
        ("model.named_parameters()", None),
        ("[p for p in model.parameters() if p.requires_grad]", None),
        ("[{'params': decay}, {'params': no_decay, 'weight_decay': 0.0}]", None),
        ("list(model.parameters()) + [extra]", None),
        ("[]", None),
    ],
)
def test_updated_modules(params, modules):
    found = updated_modules(cst.parse_expression(params))
    assert found == (frozenset(modules) if modules is not None else None)


@pytest.mark.parametrize(
    "updated, module, expected",
    [("model", "model", True), ("model", "model.encoder", True), ("model.encoder", "model", False),
     ("model", "model2", False), ("self.critic", "self.critic.fc1", True)],
)
def test_an_optimizer_covers_its_module_and_the_submodules(updated, module, expected):
    assert covers(updated, module) is expected
