"""Bug case: class probabilities normalised via expand(x.shape).

Source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/pull/11
What goes wrong: `total = scores.sum(-1)` is (N,); `total.expand(scores.shape)` aligns N with the class axis and
raises unless N == C
The fix: `scores.sum(-1, keepdim=True).expand(scores.shape)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def to_probs(scores):
    scores = scores.clamp(min=0) + 1e-6
    total = scores.sum(-1)
    return scores / total.expand(scores.shape)


def demo():
    p = to_probs(torch.randn(5, 3))
    return torch.allclose(p.sum(-1), torch.ones(5))
