"""Look-alike (correct code): attention merges heads with reshape after transpose.

Source: https://github.com/pytorch/pytorch/issues/764
Why it is correct: `reshape` copies when the layout requires it, so the merge after `transpose(1, 2)` is correct
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = F.softmax((q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1)), dim=-1)
        y = att @ v
        return y.transpose(1, 2).reshape(B, T, C)


def demo():
    return tuple(CausalSelfAttention(16, 4)(torch.randn(2, 5, 16)).shape) == (2, 5, 16)
