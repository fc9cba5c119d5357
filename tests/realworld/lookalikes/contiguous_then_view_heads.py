"""Look-alike (correct code): multi-head output made contiguous before the view.

Source: https://jishuzhan.net/article/1883339035431145474
Why it is correct: `.contiguous()` lays the permuted tensor out row-major, after which any `view` with the right
element count is legal
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def merge_heads(out):
    b, h, n, d = out.shape
    return out.permute(0, 2, 1, 3).contiguous().view(b, n, h * d)


def demo():
    return tuple(merge_heads(torch.randn(2, 4, 3, 5)).shape) == (2, 3, 20)
