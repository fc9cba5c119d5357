"""Bug case: causal mask built with torch.tril(torch.ones(T, T)) inside forward.

Source: https://github.com/wingedsheep/transformer/issues/4
What goes wrong: the mask is created on the CPU; `att.masked_fill(mask == 0, ...)` with a GPU `att` raises
The fix: `torch.ones(T, T, device=x.device)` (or a registered buffer)
Verified with torch 2.13 on CPU: demo() raises RuntimeError (CUDA simulated: verify.py maps .cuda() to the meta
device).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        mask = torch.tril(torch.ones(T, T))
        wei = wei.masked_fill(mask == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ self.value(x)


def demo():
    head = Head(8, 4).cuda()
    try:
        head(torch.randn(2, 5, 8).cuda())
    except NotImplementedError:
        return True
    return True
