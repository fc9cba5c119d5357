"""Fixed twin: einops-style axis names passed to torch.einsum.

Source: https://github.com/pytorch/pytorch/issues/73485
What goes wrong: torch.einsum takes one letter per axis; "batch", "heads" are read as many subscripts and einsum
raises
The fix: single-letter subscripts
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def attention_scores(q, k):
    return torch.einsum("b h i d, b h j d -> b h i j", q, k)


def demo():
    s = attention_scores(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 6, 5))
    return tuple(s.shape) == (2, 3, 4, 6)
