"""Issue 12 items 2 and 3 on SC308: a wrapper's `backward(loss)` back-propagates its argument,
optimizers over new leaves need no `zero_grad()`, and a second loss through the part of a graph
an earlier backward freed (a GAN without `.detach()`) raises."""

from __future__ import annotations

from functools import partial

import libcst as cst

from rule_harness import family_rules, finding_lines

from shapecheck.semantic.backward_targets import method_backward_start
from shapecheck.semantic.facts import NON_LEAF, TENSOR, Fact
from shapecheck.semantic.graph_reads import graph_names_read

TRAINING_RULES = family_rules("SC3", "SC6")
codes = partial(finding_lines, rules=TRAINING_RULES)


def _call(text: str) -> cst.Call:
    call = cst.parse_expression(text)
    assert type(call) is cst.Call
    return call


def test_the_pass_starts_from_the_wrappers_argument_unless_the_receiver_is_a_computed_tensor():
    unknown = lambda expr: Fact()  # noqa: E731
    computed = lambda expr: Fact(kind=TENSOR, grad=NON_LEAF)  # noqa: E731
    wrapper = _call("accelerator.backward(loss)")
    assert cst.ensure_type(method_backward_start(wrapper, unknown), cst.Name).value == "loss"
    own = _call("y.backward(g)")
    assert cst.ensure_type(method_backward_start(own, computed), cst.Name).value == "y"
    plain = _call("loss.backward()")
    assert cst.ensure_type(method_backward_start(plain, unknown), cst.Name).value == "loss"
    manual = _call("self.manual_backward(loss)")
    assert cst.ensure_type(method_backward_start(manual, unknown), cst.Name).value == "loss"
    assert method_backward_start(_call("loss.sum()"), unknown) is None


def test_reads_through_detach_data_item_and_metadata_carry_no_graph():
    assert graph_names_read(cst.parse_expression("netD(fake.detach())")) == {"netD"}
    assert graph_names_read(cst.parse_expression("a + b.data * c.item()")) == {"a"}
    assert graph_names_read(cst.parse_expression("x.view(x.size(0), -1)")) == {"x", "x.view"}
    assert graph_names_read(cst.parse_expression("f(x=y)")) == {"f", "y"}


LIGHTNING = """\
def step(self, batch):
    loss = self.loss_fn(self.model(batch))
    self.manual_backward(loss)
    self.manual_backward(loss)
"""


def test_a_manual_backward_twice_on_one_loss_is_flagged():
    assert ("SC308", 4) in codes(LIGHTNING)


def test_a_wrapper_backward_once_per_iteration_is_not():
    code = ("from accelerate import Accelerator\ndef train(model, loader, opt):\n"
            "    accelerator = Accelerator()\n    for batch in loader:\n        opt.zero_grad()\n"
            "        loss = model(batch).mean()\n        accelerator.backward(loss)\n        opt.step()\n")
    assert "SC308" not in [c for c, _ in codes(code)]


SHARED = """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return torch.relu(self.fc(x))
def train(x, head_a, head_b):
    net = Net()
    feats = net(x)
    loss_a = head_a(feats).sum()
    loss_a.backward()
    loss_b = head_b(feats).sum()
    loss_b.backward()
"""


def test_a_second_loss_on_features_an_earlier_backward_freed_is_flagged():
    assert ("SC308", 15) in codes(SHARED)


def test_features_recomputed_detached_or_retained_are_not_flagged():
    recomputed = SHARED.replace("    loss_b = head_b(feats)", "    feats = net(x)\n    loss_b = head_b(feats)")
    detached = SHARED.replace("head_a(feats)", "head_a(feats.detach())")
    retained = SHARED.replace("loss_a.backward()", "loss_a.backward(retain_graph=True)")
    branches = SHARED.replace("    loss_a.backward()\n", "    if x.sum() > 0:\n        loss_a.backward()\n")
    for code in (recomputed, detached, retained, branches):
        assert "SC308" not in [c for c, _ in codes(code)], code
