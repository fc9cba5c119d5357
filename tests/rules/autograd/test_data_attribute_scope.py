"""SC303 and SC310: `.data` is a default finding only where a graph can be waiting (issue 12, item 1).

The programs are shaped after real code: weight initialisation and re-parameterisation of vision
libraries, frozen batch norms, manual SGD and weight clipping of training scripts, EMA updates.
"""

from __future__ import annotations

import textwrap

import pytest
from rule_harness import finding_lines, findings

from shapecheck.rules.catalog import get_rule

DATA_RULES = [get_rule("SC303"), get_rule("SC310")]


def lines(source: str) -> list[tuple[str, int]]:
    return finding_lines(textwrap.dedent(source), DATA_RULES)


LEGACY_ONLY = {
    # timm's `_init_weights`: a module-level init function applied with `model.apply`
    "init_weights": ("""
        import torch.nn as nn
        def _init_weights(m):
            if isinstance(m, nn.Linear):
                m.weight.data.normal_(mean=0.0, std=0.02)
                m.bias.data.zero_()
        """, [("SC310", 5), ("SC310", 6)]),
    # `reset_parameters` of a module
    "reset_parameters": ("""
        import torch
        import torch.nn as nn
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
            def reset_parameters(self):
                self.fc.weight.data.uniform_(-0.1, 0.1)
            def forward(self, x):
                return self.fc(x)
        """, [("SC310", 9)]),
    # loading weights from a checkpoint
    "loading": ("""
        import torch
        def load_head(model, state):
            model.fc.weight.data.copy_(state["fc.weight"])
            model.fc.bias.data.copy_(state["fc.bias"])
        """, [("SC310", 4), ("SC310", 5)]),
    # manual SGD after the backward pass (pytorch/examples word_language_model)
    "manual_sgd_after_backward": ("""
        import torch
        def train(model, criterion, data, targets, lr):
            output = model(data)
            loss = criterion(output, targets)
            loss.backward()
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
        """, [("SC310", 8)]),
    # a distributed copy: averaging parameters across workers, no graph
    "distributed_average": ("""
        import torch.distributed as dist
        def average_parameters(model, world_size):
            for p in model.parameters():
                dist.all_reduce(p.data)
                p.data /= world_size
        """, [("SC310", 5), ("SC310", 6)]),
}


@pytest.mark.parametrize("name", sorted(LEGACY_ONLY))
def test_legacy_idiom_is_sc310_not_sc303(name):
    source, expected = LEGACY_ONLY[name]
    assert lines(source) == expected


SILENT = {
    # a frozen batch norm: `weight` and `bias` are buffers, nothing requires grad
    "frozen_batch_norm": """
        import torch
        import torch.nn as nn
        class FrozenBatchNorm2d(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("weight", torch.ones(n))
                self.register_buffer("bias", torch.zeros(n))
                self.register_buffer("running_mean", torch.zeros(n))
            def fuse(self, other):
                self.weight.data.copy_(other.weight.detach())
            def forward(self, x):
                self.bias.data.zero_()
                return x * self.weight.reshape(1, -1, 1, 1) + self.bias.reshape(1, -1, 1, 1)
        """,
    # storage swaps and metadata have no plain replacement, or touch no values
    "swap_and_metadata": """
        import torch
        import torch.nn as nn
        def grow(layer: nn.Linear, n):
            layer.weight.data = torch.cat([layer.weight.detach(), torch.zeros(n, layer.in_features)])
            return layer.weight.data.shape[0]
        """,
    # a gradient does not require grad
    "grad_data": """
        def clear(model):
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.data.zero_()
        """,
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent(name):
    assert lines(SILENT[name]) == []


def test_pure_reads_never_say_a_change_is_made():
    """`torch.cat`/`mm`/`cumsum` of `.data` only read it: SC310 says so, and nothing of a change."""
    source = textwrap.dedent("""
        import torch
        def fuse(a, b, x):
            w = torch.cat([a.weight.data, b.weight.detach()])
            y = torch.mm(x, a.weight.data)
            z = a.weight.data.cumsum(0)
            return w, y, z
        """)
    found = findings(source, DATA_RULES)
    assert [(code, line) for code, line, _ in found] == [("SC310", 4), ("SC310", 5), ("SC310", 6)]
    for _, _, message in found:
        assert "reads `a.weight`" in message and "change" not in message


WAITING = {
    # inside forward: the graph of this call, or of an earlier one, may hold the weight
    "forward": ("""
        import torch
        import torch.nn as nn
        class Clamped(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(4, 4))
            def forward(self, x):
                y = x @ self.w
                self.w.data.clamp_(-1, 1)
                return y
        """, [("SC303", 10)]),
    # between the forward pass and the backward of a training step
    "training_step": ("""
        import torch.nn.functional as F
        def train_step(model, x, y, optimizer):
            optimizer.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y)
            for p in model.parameters():
                p.data.add_(0.01)
            loss.backward()
            optimizer.step()
        """, [("SC303", 8)]),
    # `scaler.scale(loss).backward()` and a wrapper's `accelerator.backward(loss)`
    "scaled_backward": ("""
        def train_step(model, scaler, x, optimizer):
            loss = model(x).mean()
            model.head.weight.data.mul_(0.5)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
        """, [("SC303", 4)]),
    "wrapper_backward": ("""
        def train_step(accelerator, model, x):
            loss = model(x).mean()
            for n, p in model.named_parameters():
                p.data.clamp_(-1, 1)
            accelerator.backward(loss)
        """, [("SC303", 5)]),
}


@pytest.mark.parametrize("name", sorted(WAITING))
def test_change_while_a_graph_waits_is_sc303(name):
    source, expected = WAITING[name]
    assert lines(source) == expected


def test_sc303_message_says_where_the_graph_waits():
    source, _ = WAITING["training_step"]
    [(code, _, message)] = findings(textwrap.dedent(source), DATA_RULES)
    assert code == "SC303"
    assert "after a forward pass used `p` and before the loss's `backward()`" in message
    assert "under `torch.no_grad()`" in message


def test_a_change_after_the_backward_or_before_the_forward_is_not_sc303():
    source = textwrap.dedent("""
        def critic_step(critic, real, fake, optimizer):
            for p in critic.parameters():
                p.data.clamp_(-0.01, 0.01)
            loss = critic(fake).mean() - critic(real).mean()
            loss.backward()
            optimizer.step()
            for p in critic.parameters():
                p.data.clamp_(-0.01, 0.01)
        """)
    assert lines(source) == [("SC310", 4), ("SC310", 9)]


def test_a_model_the_loss_does_not_use_is_not_waited_on():
    """An EMA copy is changed between the forward and the backward of another model."""
    source = textwrap.dedent("""
        def train_step(model, ema, x, optimizer):
            loss = model(x).mean()
            for e, p in zip(ema.parameters(), model.parameters()):
                e.data.mul_(0.99)
            loss.backward()
        """)
    assert [code for code, _ in lines(source)] in ([], ["SC310"])
    assert ("SC303", 5) not in lines(source)


def test_sc310_is_opt_in_and_sc303_is_not():
    assert get_rule("SC303").default_enabled and not get_rule("SC310").default_enabled
