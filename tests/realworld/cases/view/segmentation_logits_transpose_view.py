"""Bug case: per-pixel cross entropy by moving channels last with two transposes.

Source: https://github.com/pytorch/pytorch/issues/764
What goes wrong: `(N, C, H, W)` logits are transposed to `(N, H, W, C)`; `.view(-1, c)` on the non-contiguous result
raises
The fix: `.contiguous().view(-1, c)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def cross_entropy2d(logits, target):
    n, c, h, w = logits.size()
    logits = logits.transpose(1, 2).transpose(2, 3)
    logits = logits.view(-1, c)
    return F.cross_entropy(logits, target.view(-1))


def demo():
    net = nn.Conv2d(3, 5, 1)
    logits = net(torch.randn(2, 3, 4, 4))
    loss = cross_entropy2d(logits, torch.randint(0, 5, (2, 4, 4)))
    return loss.dim() == 0
