"""SC302 on tensors that layers saved (a layer with weights saves its input), on layers built
with ``inplace=True``, on views of a buffer, and in plain functions; SC301 on parameters that an
``isinstance`` test names. Each pattern was run on torch 2.13: the flagged ones raise at backward
(or at the change), the silent twins do not."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

RULES = [get_rule("SC301"), get_rule("SC302")]


def _found(code: str) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in lint_text(textwrap.dedent(code), RULES)]


BLOCKS = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, None, 1e-5)


class Attention(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
        self.qkv = nn.Linear(n, n)

    def forward(self, x):
        x = self.norm(x)
        return self.qkv(x)


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln_1 = LayerNorm(n)
        self.attn = Attention(n)

    def forward(self, x):
        {block}
        return x


class Stack(nn.Module):
    def __init__(self, n, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([Attention(n), LayerNorm(n)]))

    def forward(self, x):
        for attn, ff in self.layers:
            {stack}
        return x
'''


def test_a_residual_added_in_place_changes_what_the_norm_saved():
    code = BLOCKS.format(block="x += self.attn(self.ln_1(x))", stack="x = attn(x) + x")
    assert _found(code) == [("SC302", 33)]
    code = BLOCKS.format(block="x = x + self.attn(self.ln_1(x))", stack="x += attn(x)")
    assert _found(code) == [("SC302", 46)]


def test_a_residual_as_a_new_tensor_is_silent():
    code = BLOCKS.format(block="x = x + self.attn(self.ln_1(x))", stack="x = attn(x) + x")
    assert _found(code) == []


def test_an_in_place_dropout_of_unknown_probability_names_the_exception():
    code = textwrap.dedent('''\
        import torch
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self, n, attn_drop=0.0):
                super().__init__()
                self.qk = nn.Linear(n, 2 * n)
                self.attn_drop = nn.Dropout(attn_drop, inplace=True)

            def forward(self, x):
                q, k = self.qk(x).reshape(x.shape[0], x.shape[1], 2, -1).permute(2, 0, 1, 3).unbind(0)
                attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
                attn = self.attn_drop(attn)
                return attn @ x
        ''')
    (found,) = lint_text(code, RULES)
    assert (found.code, found.line, found.condition) == ("SC302", 13, "`attn_drop` is 0")
    assert "raises RuntimeError unless `attn_drop` is 0" in found.message


def test_a_decoder_that_reads_one_slice_of_its_buffer_and_writes_the_next():
    code = '''\
        import torch
        import torch.nn as nn

        class Decoder(nn.Module):
            def __init__(self, n, steps):
                super().__init__()
                self.fc = nn.Linear(n, n)
                self.steps = steps

            def forward(self, x):
                out = torch.zeros(x.size(0), self.steps, x.size(1))
                out[:, 0] = x
                for t in range(1, self.steps):
                    out[:, t] = torch.tanh(self.fc(out[:, t - 1]))
                return out

            def written_only(self, x):
                out = torch.zeros(x.size(0), self.steps, x.size(1))
                for t in range(self.steps):
                    out[:, t] = self.fc(x)
                return out
        '''
    assert _found(code) == [("SC302", 14)]


def test_isinstance_makes_a_weight_a_parameter():
    code = '''\
        import torch
        import torch.nn as nn

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.apply(self._init_weights)

            def _init_weights(self, module):
                if isinstance(module, nn.Linear):
                    module.weight.normal_(mean=0.0, std=0.02)
                    if module.bias is not None:
                        module.bias.zero_()
                elif isinstance(module, nn.Embedding):
                    torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                elif isinstance(module, nn.LayerNorm):
                    module.weight.data.fill_(1.0)

        def rebound(m):
            if isinstance(m, nn.Linear):
                m = m.weight
                m.fill_(1.0)
        '''
    assert _found(code) == [("SC301", 12), ("SC301", 14)]


def test_json_output_carries_the_condition(tmp_path):
    path = tmp_path / "attn.py"
    path.write_text(textwrap.dedent('''\
        import torch.nn as nn

        class A(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.drop = nn.Dropout(p, inplace=True)

            def forward(self, x):
                s = self.fc(x).softmax(-1)
                s = self.drop(s)
                return s
        '''))
    out = subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--select", "SC302", "--format", "json",
                          "--no-cache", "--exit-zero", str(path)], capture_output=True, text=True, check=True)
    assert [(d["line"], d["condition"]) for d in json.loads(out.stdout)] == [(11, "`p` is 0")]
