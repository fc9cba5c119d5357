"""Bug case: GPT attention block merges heads with view after transpose.

Source: https://github.com/pytorch/pytorch/issues/764
What goes wrong: `y.transpose(1, 2)` is not contiguous, so `.view(B, T, C)` raises "view size is not compatible with
input tensor's size and stride"
The fix: call `.contiguous()` before `.view`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).view(B, T, C)
        return self.c_proj(y)


def demo():
    attn = CausalSelfAttention(16, 4)
    out = attn(torch.randn(2, 5, 16))
    return tuple(out.shape) == (2, 5, 16)
