"""SC203 on attention code as it is written: the key not transposed, the product's operands
swapped, a head size kept in a variable (``hs = C // self.n_head``), with the correct twins and
the sizes from a config that may equal the measured ones (verified with torch 2.13)."""

from __future__ import annotations

from functools import partial

import pytest

from rule_harness import family_rules, findings

flagged = partial(findings, rules=family_rules("SC203"))

_GPT = (
    "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    "class CausalSelfAttention(nn.Module):\n"
    "    def __init__(self, config):\n        super().__init__()\n"
    "        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)\n"
    "        self.c_proj = nn.Linear(config.n_embd, config.n_embd)\n"
    "        self.n_head = config.n_head\n        self.n_embd = config.n_embd\n"
    "    def forward(self, x):\n        B, T, C = x.size()\n"
    "        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)\n"
    "        hs = C // self.n_head\n"
    "        k = k.view(B, T, self.n_head, hs).transpose(1, 2)\n"
    "        q = q.view(B, T, self.n_head, hs).transpose(1, 2)\n"
    "        v = v.view(B, T, self.n_head, hs).transpose(1, 2)\n"
    "        att = {scores} * (1.0 / math.sqrt(k.size(-1)))\n"
    "        att = F.softmax(att, dim=-1)\n"
    "        y = {mix}\n"
    "        y = y.transpose(1, 2).contiguous().view(B, T, C)\n"
    "        return self.c_proj(y)\n"
)

_VIT = (
    "import torch\nimport torch.nn as nn\nclass Attention(nn.Module):\n"
    "    def __init__(self, dim, num_heads=8):\n        super().__init__()\n"
    "        self.num_heads = num_heads\n        self.scale = (dim // num_heads) ** -0.5\n"
    "        self.qkv = nn.Linear(dim, dim * 3)\n"
    "    def forward(self, x):\n        B, N, C = x.shape\n"
    "        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)\n"
    "        q, k, v = qkv[0], qkv[1], qkv[2]\n"
    "        attn = {scores} * self.scale\n"
    "        attn = attn.softmax(dim=-1)\n"
    "        return torch.matmul(attn, v).transpose(1, 2).reshape(B, N, C)\n"
)

_BMM = (
    "import torch\nimport torch.nn.functional as F\ndef attend(x):\n    B, T, C = x.size()\n"
    "    q = x.contiguous()\n    k = x.contiguous()\n"
    "    w = F.softmax(torch.bmm({keys}), dim=-1)\n    return torch.bmm(w, x)\n"
)


def test_gpt_key_not_transposed():
    [(code, line, message)] = flagged(_GPT.format(scores="(q @ k)", mix="att @ v"))
    assert (code, line) == ("SC203", 19)
    assert "the inner dims are C//self.n_head and T" in message
    assert message.endswith("unless `C//self.n_head` equals `T`")


def test_gpt_weights_and_values_swapped():
    [(code, line, message)] = flagged(_GPT.format(scores="(q @ k.transpose(-2, -1))", mix="v @ att"))
    assert (code, line) == ("SC203", 21)
    assert "the inner dims are C//self.n_head and T" in message


def test_gpt_correct():
    assert flagged(_GPT.format(scores="(q @ k.transpose(-2, -1))", mix="att @ v")) == []


def test_vit_matmul_key_not_transposed():
    [(code, line, message)] = flagged(_VIT.format(scores="torch.matmul(q, k)"))
    assert (code, line) == ("SC203", 13)
    assert "unless `C//self.num_heads` equals `N`" in message


@pytest.mark.parametrize("scores", ["torch.matmul(q, k.transpose(-2, -1))", "q @ k.transpose(-2, -1)"])
def test_vit_correct(scores):
    assert flagged(_VIT.format(scores=scores)) == []


def test_bmm_keys_not_transposed_is_reported_once():
    [(code, line, message)] = flagged(_BMM.format(keys="q, k"))
    assert (code, line) == ("SC203", 7)
    assert "unless `C` equals `T`" in message


def test_bmm_keys_transposed():
    assert flagged(_BMM.format(keys="q, k.transpose(1, 2)")) == []


def test_head_size_from_the_config_split_off_the_features_differs_from_the_length():
    # the view keeps B and T and splits C into config parts: a part is independent of T
    code = ("import torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, config):\n"
            "        super().__init__()\n        self.n_head = config.n_head\n"
            "        self.head_dim = config.n_embd // config.n_head\n"
            "    def forward(self, x):\n        B, T, C = x.size()\n"
            "        q = x.view(B, T, self.n_head, self.head_dim).transpose(1, 2)\n"
            "        return q @ q, q @ q.transpose(-2, -1)\n")
    [(code_, line, message)] = flagged(code)
    assert (code_, line) == ("SC203", 10)
    assert message.endswith("the inner dims are self.head_dim and T; torch raises RuntimeError unless "
                            "`self.head_dim` equals `T`")


def test_a_config_size_the_view_did_not_split_off_may_equal_the_length():
    code = ("import torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, config):\n"
            "        super().__init__()\n        self.head_dim = config.head_dim\n"
            "    def forward(self, x):\n        B, T, C = x.size()\n"
            "        q = x.view(B, T, self.head_dim)\n"
            "        return q @ q\n")
    assert flagged(code) == []


def test_sizes_of_two_reads_may_be_equal():
    code = ("def f(x, y, n_head):\n    B, T, C = x.size()\n    B2, S, D = y.size()\n"
            "    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)\n"
            "    k = y.view(B2, S, n_head, D // n_head).transpose(1, 2)\n"
            "    return q @ k\n")
    assert flagged(code) == []
