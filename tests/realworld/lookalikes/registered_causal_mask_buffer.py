"""Look-alike (correct code): causal mask stored with register_buffer and sliced in forward.

Source: https://github.com/wingedsheep/transformer/issues/4
Why it is correct: buffers move with `model.cuda()`, so the mask is always on the scores' device
Verified with torch 2.13 on CPU: demo() runs clean and returns True (verify.py maps .cuda() to the meta device).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        wei = self.query(x) @ self.key(x).transpose(-2, -1) * C ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return F.softmax(wei, dim=-1)


def demo():
    head = Head(8, 4, 16).cuda()
    w = head(torch.randn(2, 5, 8).cuda())
    return tuple(w.shape) == (2, 5, 5)
