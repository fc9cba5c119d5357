"""Look-alike (correct code): splitting the time axis of a transposed sequence with view.

Source: https://liu-nlp.ai/tdde09/blog/posts/2024-01-19/index.html
Why it is correct: splitting one dim is always expressible with strides, so `view` after `transpose(1, 2)` is legal
here
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def chunk_time(x):
    b, t, c = x.shape
    return x.transpose(1, 2).view(b, c, t // 2, 2)


def demo():
    return tuple(chunk_time(torch.randn(2, 6, 3)).shape) == (2, 3, 3, 2)
