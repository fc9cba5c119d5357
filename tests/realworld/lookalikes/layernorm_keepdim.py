"""Look-alike (correct code): hand-written LayerNorm with keepdim reductions.

Source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/pull/11
Why it is correct: mean and std keep the feature axis, so `expand_as` and the arithmetic line up
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
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
        mu = torch.mean(z, dim=-1, keepdim=True)
        sigma = torch.std(z, dim=-1, keepdim=True)
        ln_out = (z - mu.expand_as(z)) / (sigma.expand_as(z) + self.eps)
        return ln_out * self.a_2 + self.b_2


def demo():
    out = LayerNormalization(8)(torch.randn(2, 5, 8))
    return torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5)
