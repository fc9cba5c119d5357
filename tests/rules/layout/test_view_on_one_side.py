"""SC101 where the layout is known on one path only: one side of an ``if`` on a plain flag (the
fused and the manual attention of GPT-style blocks), a layer whose output layout torch fixes
(``nn.Conv1d`` on a transposed input), and a helper whose call sites pass tensors of different
sizes but the same layout (``batchify``/``get_batch`` of the word language model). Each bug is
run with torch (it raises) and the look-alikes are silent and run."""

from __future__ import annotations

import textwrap

import pytest

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

SC101 = get_rule("SC101")

ATTENTION = """\
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
class Attention(nn.Module):
    def __init__(self, dim, heads, flash):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.heads = heads
        self.flash = flash
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        if {test}:
            y = {first}
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = F.softmax(att, dim=-1)
            y = {second}
        return y.transpose(1, 2){merge}.view(B, T, C)
"""
FUSED = "F.scaled_dot_product_attention(q, k, v, is_causal=True)"
MANUAL = "att @ v"


def attention(test: str = "self.flash", first: str = FUSED, second: str = MANUAL, merge: str = "") -> str:
    """The attention block with the ``if`` and the merge of heads given."""
    return ATTENTION.format(test=test, first=first, second=second, merge=merge)


CONV = """\
import torch.nn as nn
class TimeConv(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = {layer}
    def forward(self, x):
        y = self.conv(x.transpose(1, 2))
        return y.transpose(0, 1){fix}.view(-1)
"""

BATCHIFY = """\
import torch
def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t(){fix}
def get_batch(source, i, bptt=35):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)
def evaluate(data_source):
    for i in range(0, data_source.size(0) - 1, 35):
        data, targets = get_batch(data_source, i)
corpus = torch.arange(1000)
train_data = batchify(corpus, 20)
val_data = batchify(corpus, 10)
evaluate(val_data)
for i in range(0, train_data.size(0) - 1, 35):
    data, targets = get_batch(train_data, i)
"""


def findings(code: str) -> list[tuple[int, str]]:
    """(line, message) of each SC101 finding."""
    return [(d.line, d.message) for d in lint_text(textwrap.dedent(code), [SC101])]


def test_the_manual_side_of_a_fused_attention_is_checked():
    [(line, message)] = findings(attention())
    assert line == 23
    assert "when `self.flash` is false (line 17)" in message
    assert "raises at run time unless `T`, `self.heads` or `C//self.heads` is 1" in message
    [d] = lint_text(attention(), [SC101])
    assert d.condition == "`T`, `self.heads` or `C//self.heads` is 1 or `self.flash` is true"


def test_the_side_is_named_through_not_and_else():
    [(_, message)] = findings(attention(test="not self.slow"))
    assert "when `self.slow` is true (line 17)" in message
    [(_, message)] = findings(attention(test="self.manual", first=MANUAL.replace("att", "F.softmax(q @ k.mT, -1)"),
                                        second=FUSED))
    assert "when `self.manual` is true (line 17)" in message


@pytest.mark.parametrize("code", [
    attention(merge=".contiguous()"),  # the fixed twin
    attention(first=MANUAL.replace("att", "F.softmax(q @ k.mT, -1)") + ".contiguous()", second="att @ v + 0",
              merge=".contiguous()"),
    attention(test="self.training"),  # train and eval paths often see different sizes
    attention(test="T == 1"),  # a test on sizes may be what makes the view legal
    attention(test="q.is_contiguous()"),
    attention(test="use_fused(x)"),
])
def test_look_alikes_of_one_side_are_silent(code):
    assert findings(code) == []


def test_the_side_that_kept_the_value_from_before_the_if_is_not_blamed():
    code = """\
    def f(x, b, t, c, flag):
        y = x.view(b, t, 4, c // 4).transpose(1, 2)
        if flag:
            y = y.contiguous()
        return y.view(b, t, c)
    """
    assert findings(code) == []


def test_a_conv1d_output_is_contiguous_whatever_its_input():
    [(line, message)] = findings(CONV.format(layer="nn.Conv1d(c, c, 3, padding=1)", fix=""))
    assert line == 8 and "unless dim 0 or 1 of `y.transpose(0, 1)` is 1" in message
    assert findings(CONV.format(layer="nn.Conv1d(c, c, 3, padding=1)", fix=".contiguous()")) == []
    # avg_pool1d keeps its input's strides: the order of its output is not known
    assert findings(CONV.format(layer="nn.AvgPool1d(2)", fix="")) == []


def test_call_sites_of_different_sizes_keep_the_rank_and_the_layout():
    [(line, message)] = findings(BATCHIFY.format(fix=""))
    assert line == 8 and "(with the arguments of the calls on lines 11, 17)" in message
    assert findings(BATCHIFY.format(fix=".contiguous()")) == []


def _run(code: str, call) -> None:
    namespace: dict = {}
    exec(compile(code, "<case>", "exec"), namespace)
    call(namespace)


def test_the_bugs_raise_in_torch_and_the_look_alikes_do_not():
    torch = pytest.importorskip("torch")

    def attend(flash):
        return lambda ns: ns["Attention"](8, 2, flash)(torch.randn(2, 5, 8))

    with pytest.raises(RuntimeError, match="view size is not compatible"):
        _run(attention(), attend(False))
    _run(attention(merge=".contiguous()"), attend(False))

    def conv(ns):
        ns["TimeConv"](4)(torch.randn(2, 6, 4))

    with pytest.raises(RuntimeError, match="view size is not compatible"):
        _run(CONV.format(layer="nn.Conv1d(c, c, 3, padding=1)", fix=""), conv)
    _run(CONV.format(layer="nn.Conv1d(c, c, 3, padding=1)", fix=".contiguous()"), conv)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        _run(BATCHIFY.format(fix=""), lambda ns: None)
    _run(BATCHIFY.format(fix=".contiguous()"), lambda ns: None)
