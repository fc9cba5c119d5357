"""SC603: `.item()` in a loop is a finding only where it syncs on every step of training
(issue 12, item 5): not under a logging guard, not on the CPU, not in a loop that only evaluates."""

from __future__ import annotations

import textwrap

import pytest
from rule_harness import finding_lines

from shapecheck.rules.catalog import get_rule

RULES = [get_rule("SC603")]

TRAIN = """
import torch
def train(model, loader, loss_fn, opt, args):
    for i, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
{body}
"""


def lines(source: str) -> list[int]:
    return [line for _, line in finding_lines(textwrap.dedent(source), RULES)]


GUARDED = [
    "        if i % 100 == 0:\n            print(loss.item())\n",
    "        if (i + 1) % args.log_interval == 0 and i > 0:\n            print(loss.item())\n",
    "        if i % args.print_every == args.print_every - 1:\n            print(loss.item())\n",
    "        if not i % 50:\n            print(loss.item())\n",
    "        if i % 10 == 0:\n            if loss.item() > 10:\n                print('diverging')\n",
    "        if i % 100 == 0 or i % 333 == 0:\n            print(loss.item())\n",
]


@pytest.mark.parametrize("body", GUARDED)
def test_silent_under_a_logging_guard(body):
    assert lines(TRAIN.format(body=body)) == []


UNGUARDED = [
    ("        total = loss.item()\n", 9),
    # holds on most iterations: no logging guard
    ("        if i % 100 != 0:\n            print(loss.item())\n", 10),
    ("        if i % 100 == 0 or i > 5:\n            print(loss.item())\n", 10),
    # the `else` of a guard runs on the other iterations
    ("        if i % 100 == 0:\n            pass\n        else:\n            print(loss.item())\n", 12),
]


@pytest.mark.parametrize("body, line", UNGUARDED)
def test_flagged_on_every_training_step(body, line):
    assert lines(TRAIN.format(body=body)) == [line]


def test_silent_on_a_cpu_tensor():
    assert lines(TRAIN.format(body="        n = torch.tensor(x.shape).prod().item()\n"
                                   "        m = loss.detach().cpu().item()\n")) == []


def test_library_loop_without_step_is_silent():
    source = """
        import torch
        def evaluate(model, loader):
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct

        def clip_norms(tensors, max_norm):
            return [t * min(1.0, max_norm / t.norm().item()) for t in tensors]
        """
    assert lines(source) == []


def test_known_cuda_tensor_is_flagged_in_any_loop():
    source = """
        import torch
        def poll(n):
            flag = torch.zeros((), device="cuda")
            for _ in range(n):
                if flag.item() > 0:
                    break
        """
    assert lines(source) == [6]


def test_an_epoch_loop_that_calls_a_training_function_is_silent():
    """Once per epoch is no per-step sync: only a loop that runs the backward pass itself trains."""
    source = """
        import torch
        def train_epoch(model, loader, opt):
            total = torch.zeros(())
            for x in loader:
                loss = model(x).mean()
                loss.backward()
                opt.step()
                total += loss.detach()
            return total

        def fit(model, loader, opt, scheduler, epochs):
            for epoch in range(epochs):
                loss = train_epoch(model, loader, opt)
                scheduler.step()
                print(epoch, loss.item())
        """
    assert lines(source) == []
