"""Fixed twin: Swin-style window partition without the contiguous call.

Source: https://velog.io/@damab/pytorch-Contiguous-tensors
What goes wrong: after `permute(0, 1, 3, 2, 4, 5)` the batch and window-grid dims cannot be merged by `view(-1, ws,
ws, C)`, which raises
The fix: `.contiguous().view(-1, ws, ws, C)`
Verified with torch 2.13 on CPU: demo() runs clean and returns True.
"""
import torch


def window_partition(x, window_size):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
    return windows


def demo():
    w = window_partition(torch.randn(2, 8, 8, 3), 4)
    return tuple(w.shape) == (8, 4, 4, 3)
