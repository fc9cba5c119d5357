"""Bug case: hand-written LayerNorm expands mean and std computed without keepdim.

Source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/pull/11
What goes wrong: `torch.mean(z, dim=-1)` drops the feature axis; `mu.expand_as(z)` aligns (B, T) with the last two
dims of (B, T, D) and raises (or silently mis-normalises when T == D)
The fix: `keepdim=True` on both reductions
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn


class LayerNormalization(nn.Module):
    def __init__(self, d_hid, eps=1e-3):
        super().__init__()
        self.eps = eps
        self.a_2 = nn.Parameter(torch.ones(d_hid))
        self.b_2 = nn.Parameter(torch.zeros(d_hid))

    def forward(self, z):
        mu = torch.mean(z, dim=-1)
        sigma = torch.std(z, dim=-1)
        ln_out = (z - mu.expand_as(z)) / (sigma.expand_as(z) + self.eps)
        return ln_out * self.a_2.expand_as(ln_out) + self.b_2.expand_as(ln_out)


def demo():
    out = LayerNormalization(8)(torch.randn(2, 5, 8))
    return torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5)
