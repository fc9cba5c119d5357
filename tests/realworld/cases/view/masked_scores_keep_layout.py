"""Bug case: scores transposed, masked by multiplication, then flattened.

Source: https://github.com/BraveY/AI-with-code/issues/3
What goes wrong: elementwise `* mask` keeps the transposed layout of `scores.transpose(0, 1)`, so `.view(-1)` still
raises
The fix: `.reshape(-1)`
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def masked_flat_scores(scores, mask):
    scores = scores.transpose(0, 1) * mask
    return scores.view(-1)


def demo():
    scores = torch.randn(3, 4)
    mask = torch.ones(4, 3)
    return masked_flat_scores(scores, mask).numel() == 12
