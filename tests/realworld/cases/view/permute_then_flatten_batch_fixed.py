"""Fixed twin: a helper that flattens a permuted batch.

Source: https://liu-nlp.ai/tdde09/blog/posts/2024-01-19/index.html
What goes wrong: `permute(0, 2, 1)` swaps the last two dims; the flat `view(-1)` must merge them and raises
The fix: `.reshape(-1)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def flatten_tokens(batch):
    return batch.permute(0, 2, 1).reshape(-1)


def demo():
    return flatten_tokens(torch.randn(2, 3, 2)).numel() == 12
